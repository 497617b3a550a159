/* check.c - static checks of one instruction before it runs, and its
 * predecoded form (SimPre): compute cycles from isa/timing, MACs, LMEM
 * ranges for the race detector and bank model, bytes per level, and the
 * instruction fields the run loop reads (a timing-only run reads no AtlInsn
 * but a barrier's). Everything that only depends on the instruction and the
 * chip is done once here, so the run loop stays cheap. An instruction that
 * fails a check faults when its engine reaches it (illegal field, out of
 * bounds, misaligned). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sim/sim_int.h"
#include "isa/numerics.h"
#include "isa/timing.h"
#include "isa/operands.h"

typedef struct Ctx {
    AtlSimFaultKind *kind;
    char *msg;
    size_t cap;
    const char *mn;
} Ctx;

static int bad(Ctx *c, AtlSimFaultKind k, const char *fmt, ...) ATL_PRINTF(3, 4);
static int bad(Ctx *c, AtlSimFaultKind k, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(c->msg, c->cap, "%s: ", c->mn);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < c->cap) vsnprintf(c->msg + n, c->cap - (size_t)n, fmt, ap);
    va_end(ap);
    *c->kind = k;
    return -1;
}

static int need_shape(Ctx *c, const uint32_t shape[4])
{
    for (int d = 0; d < 4; d++) {
        if (!shape[d]) return bad(c, SIM_FAULT_ILLEGAL, "field shape: dimension %d is 0", d);
        if (shape[d] > 65535) return bad(c, SIM_FAULT_ILLEGAL, "field shape: dimension %d is %u > 65535 (16 bits)", d, shape[d]);
    }
    return 0;
}

/* Fields the encoding limits to 16 bits; a program built in C could exceed them. */
static int check_16bit(Ctx *c, const AtlInsn *in)
{
    const uint32_t v[] = {in->m, in->k, in->n, in->lda, in->ldb, in->ldc, in->cin, in->ih, in->iw, in->cout};
    static const char *const names[] = {"m", "k", "n", "lda", "ldb", "ldc", "c", "h", "w", "oc"};
    for (int i = 0; i < 10; i++)
        if (v[i] > 65535) return bad(c, SIM_FAULT_ILLEGAL, "field %s: %u > 65535 (16 bits)", names[i], v[i]);
    return 0;
}

static uint64_t elems4(const uint32_t s[4]) { return (uint64_t)s[0] * s[1] * s[2] * s[3]; }

static uint64_t space_size(const AtlSim *s, int space)
{
    switch (space) {
    case ISA_SPACE_DRAM: return (uint64_t)s->chip.dram_bytes;
    case ISA_SPACE_SRAM: return (uint64_t)s->chip.sram_bytes;
    case ISA_SPACE_LMEM: return (uint64_t)s->chip.lmem_bytes;
    case ISA_SPACE_PEER: return (uint64_t)s->chip.sram_bytes;
    default: return 0;
    }
}

/* lo and hi were checked against the space's size (an int); cluster:
 * whose SRAM an SRAM range is in */
static void add_range(SimPre *pre, int space, int64_t lo, int64_t hi, uint32_t cores, int write, int cluster)
{
    if (pre->nr < SIM_MAX_RANGES) {
        SimRange *r = &pre->r[pre->nr++];
        r->lo = (uint32_t)lo;
        r->hi = (uint32_t)hi;
        r->cores = cores;
        r->write = (uint8_t)write;
        r->space = (uint8_t)space;
        r->cluster = (uint8_t)cluster;
        if (space != ISA_SPACE_LMEM) pre->far |= SIM_FAR_BIT(space, write);
    }
}

/* A peer operand (another cluster's SRAM over the NoC): only dma.copy has
 * them, at one end, on a chip with cluster links, naming one of its
 * clusters. Records the cluster and the links between in pre. */
static int check_peer(Ctx *c, const AtlSim *s, int core, const AtlInsn *in, const IsaOperand *o, SimPre *pre)
{
    if (!s->chip.noc_cluster_links)
        return bad(c, SIM_FAULT_ILLEGAL, "field %s: %s@%d names another cluster's SRAM, but chip %s has no cluster links "
                   "([noc] cluster_links = 0)", o->what, isa_space_name(o->space), o->cluster, s->chip.name);
    if (in->op != ISA_OP_DMA_COPY)
        return bad(c, SIM_FAULT_ILLEGAL, "field %s: only dma.copy reaches another cluster's SRAM", o->what);
    if (in->dst_space == ISA_SPACE_PEER && in->src_space == ISA_SPACE_PEER)
        return bad(c, SIM_FAULT_ILLEGAL, "fields dst, src: at most one end of a copy is another cluster's SRAM");
    if (o->cluster >= s->chip.clusters)
        return bad(c, SIM_FAULT_ILLEGAL, "field %s: cluster %d is not one of the chip's %d", o->what, o->cluster, s->chip.clusters);
    pre->peer = (uint8_t)o->cluster;
    pre->hops = (uint8_t)tim_noc_route(&s->chip, core / s->cpc, o->cluster, NULL);
    return 0;
}

/* Checks every operand of in (isa_operands: the one definition of what
 * each touches) against its memory and records its range for the race
 * detector (LMEM, the cluster's SRAM or DRAM). DMA ends:
 * element-aligned address and strides, inside their space; an LMEM end
 * is in the cores of the multicast mask (dst), src_core (src) or the own
 * core. Compute operands: in LMEM, starting on lmem.alignment. */
static int check_operands(Ctx *c, const AtlSim *s, int core, const AtlInsn *in, SimPre *pre)
{
    IsaOperand ops[ISA_MAX_OPERANDS];
    int n = isa_operands(in, ops);
    uint32_t own = 1u << (core % s->cpc);
    int gather = isa_ops[in->op].format == ISA_FMT_DMA_GATHER;
    for (int i = 0; i < n; i++) {
        const IsaOperand *o = &ops[i];
        if (o->end < 0) {
            int al = s->chip.lmem_alignment;
            if (al > 1 && o->base % (uint64_t)al)
                return bad(c, SIM_FAULT_MISALIGNED, "%s lmem:0x%llx is not aligned to %d bytes", o->what,
                           (unsigned long long)o->base, al);
            if (o->lo < 0 || o->hi > (int64_t)s->chip.lmem_bytes)
                return bad(c, SIM_FAULT_OOB, "%s touches lmem bytes [%lld, %lld) outside LMEM of %d bytes", o->what,
                           (long long)o->lo, (long long)o->hi, s->chip.lmem_bytes);
            add_range(pre, ISA_SPACE_LMEM, o->lo, o->hi, 0, o->write, 0);
            continue;
        }
        int space = o->space, es = o->end == 2 ? 4 : isa_dtype_size(in->dtype);
        const int32_t *st = o->end == 0 ? in->dst_stride : in->src_stride;
        if (space < 0 || space >= ISA_NUM_SPACES) return bad(c, SIM_FAULT_ILLEGAL, "field %s: bad memory space %d", o->what, space);
        if (space == ISA_SPACE_PEER && check_peer(c, s, core, in, o, pre)) return -1;
        if (o->base % (uint64_t)es) return bad(c, SIM_FAULT_MISALIGNED, "%s %s:0x%llx is not aligned to the %d-byte element",
                                               o->what, isa_space_name(space), (unsigned long long)o->base, es);
        for (int d = 0; d < 4 && o->end < 2; d++)
            if (st[d] % es) return bad(c, SIM_FAULT_MISALIGNED, "%s stride %d (%d) is not a multiple of the %d-byte element",
                                       o->what, d, st[d], es);
        if (o->lo < 0 || (uint64_t)o->hi > space_size(s, space))
            return bad(c, SIM_FAULT_OOB, "%s touches %s bytes [%lld, %lld) outside the %llu-byte space", o->what,
                       isa_space_name(space), (long long)o->lo, (long long)o->hi, (unsigned long long)space_size(s, space));
        uint32_t cores = 0;
        if (space == ISA_SPACE_LMEM) {
            cores = own;
            if (!gather && o->end == 0 && in->mask) cores = in->mask;
            if (!gather && o->end == 1) cores = 1u << in->src_core;
        }
        /* a peer operand's range is in its cluster's SRAM (race.c) */
        add_range(pre, space == ISA_SPACE_PEER ? ISA_SPACE_SRAM : space, o->lo, o->hi, cores, o->write,
                  space == ISA_SPACE_PEER ? o->cluster : core / s->cpc);
    }
    return 0;
}

static int check_dma(Ctx *c, const AtlSim *s, int core, const AtlInsn *in, SimPre *pre)
{
    int es = isa_dtype_size(in->dtype);
    if (!es) return bad(c, SIM_FAULT_ILLEGAL, "field dtype: bad dtype %d", in->dtype);
    if (need_shape(c, in->shape)) return -1;
    uint32_t all = s->cpc >= 32 ? 0xffffffffu : ((1u << s->cpc) - 1);
    if (in->mask & ~all) return bad(c, SIM_FAULT_ILLEGAL, "field mask: 0x%x names cores beyond the %d of a cluster", in->mask, s->cpc);
    /* into LMEM: the multicast; into a peer SRAM: the cores there whose semaphore `signal` counts */
    if (in->mask && in->dst_space != ISA_SPACE_LMEM && in->dst_space != ISA_SPACE_PEER)
        return bad(c, SIM_FAULT_ILLEGAL, "field mask: multicast needs an lmem destination (or a peer one, whose cores it signals)");
    if (in->op == ISA_OP_DMA_COPY && in->src_space == ISA_SPACE_LMEM && in->src_core >= s->cpc)
        return bad(c, SIM_FAULT_ILLEGAL, "field src_core: %d is not a core of the cluster (%d cores)", in->src_core, s->cpc);
    pre->bytes = elems4(in->shape) * (uint64_t)es;
    return check_operands(c, s, core, in, pre);
}

/* dma.gather / dma.scatter: the indexed end (gather's source, scatter's
 * destination) covers all `limit` rows along d1, the other end `shape`, the
 * index table one i32 per d1 position; the indices themselves are checked
 * when they are read (exec_dma.c). All three ends are in the issuing
 * core's LMEM when in LMEM. */
static int check_gather(Ctx *c, const AtlSim *s, int core, const AtlInsn *in, SimPre *pre)
{
    int es = isa_dtype_size(in->dtype);
    if (!es) return bad(c, SIM_FAULT_ILLEGAL, "field dtype: bad dtype %d", in->dtype);
    if (need_shape(c, in->shape)) return -1;
    if (!in->limit) return bad(c, SIM_FAULT_ILLEGAL, "field limit: 0 indexed rows");
    pre->bytes = elems4(in->shape) * (uint64_t)es;
    return check_operands(c, s, core, in, pre);
}

static int check_sync(Ctx *c, const AtlSim *s, const AtlInsn *in)
{
    if (in->wait > s->chip.semaphores) return bad(c, SIM_FAULT_ILLEGAL, "field wait: semaphore %d of %d", in->wait - 1, s->chip.semaphores);
    if (in->signal > s->chip.semaphores) return bad(c, SIM_FAULT_ILLEGAL, "field signal: semaphore %d of %d", in->signal - 1, s->chip.semaphores);
    if (in->op == ISA_OP_BARRIER) {
        if (in->scope > ISA_SCOPE_CHIP) return bad(c, SIM_FAULT_ILLEGAL, "field scope: %d (0 cluster, 1 chip)", in->scope);
        if (in->bar_id > 255) return bad(c, SIM_FAULT_ILLEGAL, "field id: %d > 255", in->bar_id);
        int max = in->scope == ISA_SCOPE_CHIP ? s->ncores * ISA_NUM_ENGINES : s->cpc * ISA_NUM_ENGINES;
        if (!in->bar_count || in->bar_count > max)
            return bad(c, SIM_FAULT_ILLEGAL, "field count: %d (1..%d engines in the scope)", in->bar_count, max);
    }
    return 0;
}

static int mat_dtype_ok(int d) { return d == ISA_I8 || d == ISA_F16 || d == ISA_BF16 || d == ISA_F32; }

static int check_mm(Ctx *c, const AtlSim *s, const AtlInsn *in, SimPre *pre)
{
    if (!mat_dtype_ok(in->dtype)) return bad(c, SIM_FAULT_ILLEGAL, "field dtype: %s is not a matrix dtype (i8 f16 bf16 f32)", isa_dtype_name(in->dtype));
    if (!in->m || !in->k || !in->n) return bad(c, SIM_FAULT_ILLEGAL, "fields m,k,n: zero dimension (%u x %u x %u)", in->m, in->k, in->n);
    if (in->lda < in->k) return bad(c, SIM_FAULT_ILLEGAL, "field lda: %u < k %u", in->lda, in->k);
    if (in->ldb < in->n) return bad(c, SIM_FAULT_ILLEGAL, "field ldb: %u < n %u", in->ldb, in->n);
    if (in->ldc < in->n) return bad(c, SIM_FAULT_ILLEGAL, "field ldc: %u < n %u", in->ldc, in->n);
    if (check_operands(c, s, 0, in, pre)) return -1;
    pre->macs = tim_mm_macs(in);
    pre->cycles = tim_mm_cycles(&s->chip, in->dtype, in->m, in->k, in->n);
    return 0;
}

static int check_conv(Ctx *c, const AtlSim *s, const AtlInsn *in, SimPre *pre)
{
    if (!mat_dtype_ok(in->dtype)) return bad(c, SIM_FAULT_ILLEGAL, "field dtype: %s is not a matrix dtype (i8 f16 bf16 f32)", isa_dtype_name(in->dtype));
    if (!in->cin || !in->ih || !in->iw || !in->cout || !in->kh || !in->kw)
        return bad(c, SIM_FAULT_ILLEGAL, "fields c,h,w,oc,kh,kw: zero dimension");
    if (!in->sh || !in->sw || !in->dh || !in->dw) return bad(c, SIM_FAULT_ILLEGAL, "fields sh,sw,dh,dw: must be >= 1");
    if (!in->groups || in->cin % in->groups || in->cout % in->groups)
        return bad(c, SIM_FAULT_ILLEGAL, "field groups: %u must divide c %u and oc %u", in->groups, in->cin, in->cout);
    if (in->dtype == ISA_I8 && (in->ival < -128 || in->ival > 127))
        return bad(c, SIM_FAULT_ILLEGAL, "field value: pad value %d is not an i8", in->ival);
    uint32_t oh = tim_conv_out(in->ih, in->kh, in->sh, in->dh, in->pad_top, in->pad_bottom);
    uint32_t ow = tim_conv_out(in->iw, in->kw, in->sw, in->dw, in->pad_left, in->pad_right);
    if (!oh || !ow) return bad(c, SIM_FAULT_ILLEGAL, "fields kh,kw: the dilated kernel is larger than the padded input");
    if (check_operands(c, s, 0, in, pre)) return -1;
    pre->macs = tim_conv_macs(in);
    pre->cycles = tim_conv_cycles(&s->chip, in);
    return 0;
}

static int check_vec(Ctx *c, const AtlSim *s, const AtlInsn *in, SimPre *pre)
{
    int fmt = isa_ops[in->op].format, es = isa_dtype_size(in->dtype);
    const AtlChip *ch = &s->chip;
    if (fmt != ISA_FMT_VREQ && !es) return bad(c, SIM_FAULT_ILLEGAL, "field dtype: bad dtype %d", in->dtype);
    switch (fmt) {
    case ISA_FMT_VBIN:
    case ISA_FMT_VUN:
    case ISA_FMT_VCAST: {
        if (need_shape(c, in->shape)) return -1;
        uint64_t n = elems4(in->shape);
        int os = es;
        if (fmt == ISA_FMT_VCAST) {
            os = isa_dtype_size(in->otype);
            if (!os) return bad(c, SIM_FAULT_ILLEGAL, "field otype: bad dtype %d", in->otype);
        }
        if (!num_op_dtype_ok(in->op, in->dtype))
            return bad(c, SIM_FAULT_ILLEGAL, "field dtype: %s needs %s dtype, not %s", c->mn,
                       num_is_float(in->dtype) ? "an integer" : "a float", isa_dtype_name(in->dtype));
        if (check_operands(c, s, 0, in, pre)) return -1;
        pre->elems = n;
        /* v.sel also reads the old dst */
        pre->cycles = fmt == ISA_FMT_VCAST ? tim_cast_cycles(ch, in->dtype, in->otype, n) : tim_vec_cycles(ch, in->op, in->dtype, n);
        return 0;
    }
    case ISA_FMT_VPOOL: {
        if (!in->cin || !in->ih || !in->iw || !in->kh || !in->kw || !in->sh || !in->sw)
            return bad(c, SIM_FAULT_ILLEGAL, "fields c,h,w,kh,kw,sh,sw: must be >= 1");
        if (in->pad_top >= in->kh || in->pad_bottom >= in->kh || in->pad_left >= in->kw || in->pad_right >= in->kw)
            return bad(c, SIM_FAULT_ILLEGAL, "fields pt,pb,pl,pr: padding must be smaller than the window");
        uint32_t oh = tim_conv_out(in->ih, in->kh, in->sh, 1, in->pad_top, in->pad_bottom);
        uint32_t ow = tim_conv_out(in->iw, in->kw, in->sw, 1, in->pad_left, in->pad_right);
        if (!oh || !ow) return bad(c, SIM_FAULT_ILLEGAL, "fields kh,kw: window larger than the padded input");
        if (check_operands(c, s, 0, in, pre)) return -1;
        pre->elems = (uint64_t)oh * ow * in->cin * in->kh * in->kw;
        pre->cycles = tim_pool_cycles(ch, in);
        return 0;
    }
    case ISA_FMT_VRED: {
        if (need_shape(c, in->shape)) return -1;
        if (in->axis > 3) return bad(c, SIM_FAULT_ILLEGAL, "field axis: %d > 3", in->axis);
        int os = isa_dtype_size(in->otype);
        if (!os) return bad(c, SIM_FAULT_ILLEGAL, "field otype: bad dtype %d", in->otype);
        if (num_is_float(in->dtype) != num_is_float(in->otype))
            return bad(c, SIM_FAULT_ILLEGAL, "field otype: %s result for %s input mixes integer and float",
                       isa_dtype_name(in->otype), isa_dtype_name(in->dtype));
        uint64_t n = elems4(in->shape);
        if (check_operands(c, s, 0, in, pre)) return -1;
        pre->elems = n;
        pre->cycles = tim_reduce_cycles(ch, in->dtype, n);
        return 0;
    }
    case ISA_FMT_VARG: {
        if (need_shape(c, in->shape)) return -1;
        if (in->axis > 3) return bad(c, SIM_FAULT_ILLEGAL, "field axis: %d > 3", in->axis);
        if (in->last > 1) return bad(c, SIM_FAULT_ILLEGAL, "field last: %d is not 0 or 1", in->last);
        uint64_t n = elems4(in->shape);
        if (check_operands(c, s, 0, in, pre)) return -1;
        pre->elems = n;
        pre->cycles = tim_reduce_cycles(ch, in->dtype, n);
        return 0;
    }
    case ISA_FMT_VREQ: {
        if (need_shape(c, in->shape)) return -1;
        if (in->lo > in->hi || in->lo < -128 || in->hi > 127)
            return bad(c, SIM_FAULT_ILLEGAL, "fields lo,hi: [%d, %d] is not an i8 range", in->lo, in->hi);
        if (in->ival < -128 || in->ival > 127) return bad(c, SIM_FAULT_ILLEGAL, "field value: zero point %d is not an i8", in->ival);
        uint64_t n = elems4(in->shape);
        if (check_operands(c, s, 0, in, pre)) return -1;
        pre->elems = n;
        pre->cycles = tim_requant_cycles(ch, n);
        return 0;
    }
    default:
        return bad(c, SIM_FAULT_ILLEGAL, "no vector format");
    }
}

int sim_check_insn(const AtlSim *s, int core, int engine, const AtlInsn *in,
                   SimPre *pre, AtlSimFaultKind *kind, char *msg, size_t cap)
{
    Ctx c = {kind, msg, cap, "?"};
    memset(pre, 0, sizeof *pre);
    if (in->op >= ISA_NUM_OPS) return bad(&c, SIM_FAULT_ILLEGAL, "illegal opcode %d", in->op);
    c.mn = isa_ops[in->op].mnemonic;
    pre->op = in->op;
    pre->fmt = (uint8_t)isa_ops[in->op].format;
    pre->wait = in->wait;
    pre->signal = in->signal;
    pre->dtype = in->dtype;
    pre->dst_space = in->dst_space;
    pre->src_space = in->src_space;
    pre->mask = in->mask;
    pre->layer = (uint16_t)isa_tag_layer(in->layer);
    pre->member = (uint8_t)(isa_tag_member(in->layer) + 1);
    int want = isa_ops[in->op].engine;
    if (want != ISA_ENGINE_ANY && want != engine)
        return bad(&c, SIM_FAULT_ILLEGAL, "a %s instruction in the %s engine's stream", isa_engine_name(want), isa_engine_name(engine));
    if (check_sync(&c, s, in) || check_16bit(&c, in)) return -1;
    int rc;
    switch (isa_ops[in->op].format) {
    case ISA_FMT_DMA_COPY:
    case ISA_FMT_DMA_FILL: rc = check_dma(&c, s, core, in, pre); break;
    case ISA_FMT_DMA_GATHER: rc = check_gather(&c, s, core, in, pre); break;
    case ISA_FMT_MM: rc = check_mm(&c, s, in, pre); break;
    case ISA_FMT_CONV: rc = check_conv(&c, s, in, pre); break;
    case ISA_FMT_BARRIER:
    case ISA_FMT_NONE: return 0;
    default: rc = check_vec(&c, s, in, pre); break;
    }
    if (rc) return rc;
    /* the race detector's cores: an LMEM range on the own core names it */
    for (int i = 0; i < pre->nr; i++) {
        if (pre->r[i].space != ISA_SPACE_LMEM) continue;
        if (!pre->r[i].cores) pre->r[i].cores = 1u << (core % s->cpc);
        pre->cores |= pre->r[i].cores;
    }
    if (!sim_pre_is_dma(pre)) {
        tim_lmem_bytes(in, &pre->lmem_rd, &pre->lmem_wr);
        mem_pre_banks(s, pre);
    }
    return 0;
}

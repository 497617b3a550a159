/* emit.c - the schedule -> per-core instruction streams.
 *
 * Reads: a schedule (schedule/schedule.h) and its layers.
 * Does: for every segment, walks the time-step table of every core of its
 *   core set (bk_sched_table, the one the cost model replays) and appends
 *   each action's instructions to the core's DMA / MAT / VEC streams:
 *   MCAST      the prologue's DMAs (or one piece of a gather in pieces,
 *              bk_band_gather_pieces), those into LMEM masked; the last
 *              signals, and so does each instruction of it that carries
 *              a signal of its own (a gather piece's flag)
 *   WAIT       a nop on the action's stream waiting on the semaphore
 *   LOAD       the tile's loads (weight loads dropped when skip_w), the
 *              last signals; none left: a DMA nop that signals
 *   COMPUTE    the tile's computes on their engines, the first waiting and
 *              the last signalling; at every engine change the old
 *              engine's last instruction hands over through a nop that
 *              signals TO_VEC/TO_MAT of the slot and the new engine's
 *              first waits on it (a second wait goes on a nop of its
 *              own); none: a vector nop that waits and signals
 *   STORE      the tile's stores, the first waiting; none: a DMA nop that
 *              waits
 *   COPY       a DMA-only tile's copies
 *   BARRIER    one barrier instruction on each of the core's engines
 *              (the segment's scope, id and count)
 *   and finally an `end` on every stream.
 * Placement split: the segment's instance and activation copy move every
 *   DRAM operand (bk_emit_move): an io tensor's address to the instance's
 *   images, an activation's to the cluster's copy of the region.
 *   Placement pipeline: the instance's stage boundaries (SRAM operands in
 *   the ranges of x->smove) move to the instance's buffer, the output's
 *   into the next stage's cluster (peer operands).
 * Guarantees: every instruction carries the layer id of the segment's
 *   layer, as a member tag (isa_member_tag) when the lowering marked it
 *   as a layer group member's (layer = member + 1, lower/chain.c) and the
 *   id fits one; a DMA reading LMEM names its own core as the source core. */
#include <string.h>
#include "compiler/emit/emit.h"
#include <stdlib.h>
#include "compiler/alloc/alloc.h"
#include "isa/operands.h"
#include "isa/regs.h"

/* Adds what in moves and occupies to x->use. */
static void account(BkEmit *x, const AtlInsn *in)
{
    IsaOperand ops[ISA_MAX_OPERANDS];
    int n = isa_operands(in, ops);
    uint64_t bytes = (uint64_t)isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) bytes *= in->shape[d];
    for (int i = 0; i < n; i++) {
        if (ops[i].space == ISA_SPACE_LMEM && ops[i].hi > 0 && (uint64_t)ops[i].hi > x->use.lmem_peak)
            x->use.lmem_peak = (uint64_t)ops[i].hi;
        if (ops[i].space == ISA_SPACE_DRAM && ops[i].end == 0) x->use.dram_wr += bytes;
        if (ops[i].space == ISA_SPACE_DRAM && ops[i].end == 1) x->use.dram_rd += bytes;
    }
}

/* Placement split: a DRAM operand of the instance's code moved to where
 * segment sg's instance keeps it (io: its images; activations: its
 * cluster's copy of the region). */
static void move_operand(const BkEmit *x, uint8_t space, uint64_t *addr)
{
    const BkSegment *sg = x->sg;
    if (space != ISA_SPACE_DRAM || !sg) return;
    uint64_t tag = *addr >> ATL_RELOC_SHIFT, off = *addr & 0xffffffffu;
    if (tag == ABM_REGION_ACTIVATIONS + 1) *addr += (uint64_t)sg->act_copy * x->c->act_bytes;
    if (tag != ABM_REGION_IO + 1) return;
    for (int i = 0; i < x->nio; i++)
        if (off >= x->io_off[i] && off < x->io_off[i] + x->io_size[i]) {
            *addr += (uint64_t)sg->inst * x->io_size[i];
            return;
        }
}

/* Placement pipeline: an SRAM operand in one of the instance's boundary
 * ranges moved to its buffer (x->smove), into the next stage's cluster for
 * the stage's output (a peer operand). */
static void move_sram(const BkEmit *x, uint8_t *space, uint64_t *addr)
{
    if (*space != ISA_SPACE_SRAM) return;
    for (int i = 0; i < x->nsmove; i++) {
        const BkEmitSramMove *m = &x->smove[i];
        if (*addr < m->lo || *addr >= m->hi) continue;
        *addr += m->add;
        if (m->cluster >= 0) {
            *space = ISA_SPACE_PEER;
            *addr = isa_peer_addr(m->cluster, *addr);
        }
        return;
    }
}

static int put(BkEmit *x, int core, int engine, AtlInsn in, int layer, AtlErr *e)
{
    in.layer = in.layer && layer <= ISA_MAX_TAGGED_LAYER ? isa_member_tag((unsigned)layer, in.layer - 1u) : (uint16_t)layer;
    if (x->c->split && isa_ops[in.op].engine == ISA_ENGINE_DMA) {
        move_operand(x, in.dst_space, &in.dst);
        if (in.op != ISA_OP_DMA_FILL) move_operand(x, in.src_space, &in.src);
        if (isa_ops[in.op].format == ISA_FMT_DMA_GATHER) move_operand(x, in.src2_space, &in.src2);
        move_sram(x, &in.dst_space, &in.dst);
        if (in.op == ISA_OP_DMA_COPY) move_sram(x, &in.src_space, &in.src);
    }
    account(x, &in);
    /* an lmem: source is the issuing core's own LMEM */
    if (in.op == ISA_OP_DMA_COPY && in.src_space == ISA_SPACE_LMEM)
        in.src_core = (uint8_t)(core % x->c->chip->cores_per_cluster);
    return prog_append(&x->prog, core, engine, &in, 0, e);
}

static AtlInsn nop(int wait, int signal)
{
    AtlInsn n;
    memset(&n, 0, sizeof n);
    n.op = ISA_OP_NOP;
    n.wait = (uint8_t)(wait >= 0 ? wait + 1 : 0);
    n.signal = (uint8_t)(signal >= 0 ? signal + 1 : 0);
    return n;
}

static int engine_of(const AtlInsn *in)
{
    int eng = isa_ops[in->op].engine;
    return eng == ISA_ENGINE_ANY ? ISA_ENGINE_VEC : eng;
}

/* A compute action's first instruction waits for its tile's loads; when
 * the engine that waits changes from one tile of a slot to the next, the
 * engine that took the last signal hands over first (bk_sched_handover):
 * a counting semaphore gives its signals to whichever waiter comes first. */
static int emit_compute(BkEmit *x, int core, const BkCode *k, const BkAction *a, int *loaded_by, int layer, AtlErr *e)
{
    int first = k->ncp ? engine_of(&k->cp[0]) : ISA_ENGINE_VEC, was;
    int w0 = bk_sched_handover(loaded_by, a, first, &was);
    if (w0 >= 0 && (put(x, core, was, nop(-1, w0), layer, e) || put(x, core, first, nop(w0, -1), layer, e))) return -1;
    if (k->ncp == 0) return put(x, core, ISA_ENGINE_VEC, nop(a->wait, a->signal), layer, e);
    int prev = -1;
    for (int i = 0; i < k->ncp; i++) {
        AtlInsn in = k->cp[i];
        int eng = engine_of(&in);
        int w1 = i == 0 ? a->wait : -1, w2 = -1;
        if (prev >= 0 && eng != prev) {
            int sem = (eng == ISA_ENGINE_MAT ? BK_SEM_TO_MAT : BK_SEM_TO_VEC) + a->slot;
            /* the previous engine's last instruction hands over */
            if (put(x, core, prev, nop(-1, sem), layer, e)) return -1;
            if (w1 < 0) w1 = sem; else w2 = sem;
        }
        if (w2 >= 0 && put(x, core, eng, nop(w2, -1), layer, e)) return -1;
        in.wait = (uint8_t)(w1 >= 0 ? w1 + 1 : 0);
        in.signal = (uint8_t)(i == k->ncp - 1 && a->signal >= 0 ? a->signal + 1 : 0);
        if (put(x, core, eng, in, layer, e)) return -1;
        prev = eng;
    }
    return 0;
}

/* A DMA action's instructions (bk_action_dma), the wait on the first and
 * the signal (and multicast mask) on the last; a nop when none. */
static int emit_dma(BkEmit *x, int core, const BkCode *k, const BkAction *a, int layer, AtlErr *e)
{
    int n, first, last;
    const uint8_t *skip;
    const AtlInsn *ins = bk_action_dma(a, k, &n, &skip, &first, &last);
    if (last < 0) return put(x, core, ISA_ENGINE_DMA, nop(a->wait, a->signal), layer, e);
    for (int j = first; j <= last; j++) {
        if (skip && skip[j]) continue;
        AtlInsn in = ins[j];
        if (a->kind == BK_ACT_MCAST && in.dst_space == ISA_SPACE_LMEM) in.mask = a->mask;
        if (a->kind != BK_ACT_COPY) {
            in.wait = (uint8_t)(j == first && a->wait >= 0 ? a->wait + 1 : 0);
            /* an MCAST's gather pieces signal too (bk_band_gather_pieces) */
            uint8_t own = a->kind == BK_ACT_MCAST ? in.signal : 0;
            in.signal = (uint8_t)(j == last && a->signal >= 0 ? a->signal + 1 : own);
        }
        if (put(x, core, ISA_ENGINE_DMA, in, layer, e)) return -1;
    }
    return 0;
}

static int emit_barrier(BkEmit *x, int core, const BkBarrier *b, int layer, AtlErr *e)
{
    for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
        AtlInsn bar;
        memset(&bar, 0, sizeof bar);
        bar.op = ISA_OP_BARRIER;
        bar.scope = (uint8_t)b->scope;
        bar.bar_id = (uint16_t)b->id;
        bar.bar_count = (uint16_t)b->count;
        if (put(x, core, eng, bar, layer, e)) return -1;
    }
    return 0;
}

int bk_emit_barrier(BkEmit *x, const BkBarrier *b, int layer, AtlErr *e)
{
    for (int core = b->set.first; core < b->set.first + b->set.count; core++)
        if (emit_barrier(x, core, b, layer, e)) return -1;
    return 0;
}

static int emit_core(BkEmit *x, const BkSegment *sg, int core, AtlErr *e)
{
    int layer = sg->layer->layer_id;
    int loaded_by[2] = {-1, -1};    /* per slot, the engine that last waited for its loads */
    if (bk_sched_table(x->c, sg, core, &x->table, e)) return -1;
    for (int i = 0; i < x->table.n; i++) {
        const BkAction *a = &x->table.a[i];
        if (a->kind == BK_ACT_BARRIER) {
            if (emit_barrier(x, core, &sg->bar, layer, e)) return -1;
            loaded_by[0] = loaded_by[1] = -1;
            continue;
        }
        if (a->kind == BK_ACT_WAIT) {
            if (put(x, core, a->engine, nop(a->wait, a->signal), layer, e)) return -1;
            continue;
        }
        const BkCode *k = bk_walk_code(x->c, sg, &x->walk, a, core, e);
        if (!k) return -1;
        int rc = 0;
        if (a->kind == BK_ACT_COMPUTE) rc = emit_compute(x, core, k, a, loaded_by, layer, e);
        else if (a->kind != BK_ACT_COPY || k->nst) rc = emit_dma(x, core, k, a, layer, e);
        if (rc) return -1;
    }
    return 0;
}

/* Placement split: the io roots' ranges in the instance's code. */
static int io_ranges(BkEmit *x, AtlErr *e)
{
    const IrGraph *g = x->c->g;
    int n = g->nin + g->nout;
    free(x->io_off);
    free(x->io_size);
    x->nio = 0;
    x->io_off = malloc((size_t)(n ? n : 1) * sizeof *x->io_off);
    x->io_size = malloc((size_t)(n ? n : 1) * sizeof *x->io_size);
    if (!x->io_off || !x->io_size) return atl_fail(e, "out of memory");
    for (int k = 0; k < n; k++) {
        int t = k < g->nin ? g->inputs[k] : g->outputs[k - g->nin];
        /* a pipeline's stage boundary lives in SRAM (x->smove moves it) */
        if (bk_tensor_addr(x->c, t) >> ATL_RELOC_SHIFT == (uint64_t)BK_SRAM_TAG_REGION + 1) continue;
        x->io_off[x->nio] = bk_tensor_addr(x->c, t) & 0xffffffffu;
        x->io_size[x->nio++] = (uint64_t)ir_numel(&g->t[t]) * (uint64_t)bk_tensor_es(x->c, t);
    }
    return 0;
}

int bk_emit_init(BkEmit *x, BkCtx *c, AtlErr *e)
{
    memset(x, 0, sizeof *x);
    x->c = c;
    if (c->split && io_ranges(x, e)) return -1;
    return prog_init(&x->prog, cfg_total_cores(c->chip), e);
}

int bk_emit_use_ctx(BkEmit *x, BkCtx *c, AtlErr *e)
{
    x->c = c;
    return c->split ? io_ranges(x, e) : 0;
}

void bk_emit_free(BkEmit *x)
{
    prog_free(&x->prog);
    free(x->io_off);
    free(x->io_size);
    bk_table_free(&x->table);
    bk_walk_free(&x->walk);
}

int bk_emit_segment(BkEmit *x, const BkSegment *sg, AtlErr *e)
{
    memset(&x->use, 0, sizeof x->use);
    x->sg = sg;
    for (int core = sg->bar.set.first; core < sg->bar.set.first + sg->bar.set.count; core++)
        if (emit_core(x, sg, core, e)) return -1;
    return 0;
}

int bk_emit_finish(BkEmit *x, AtlErr *e)
{
    int ncores = cfg_total_cores(x->c->chip);
    for (int core = 0; core < ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            AtlInsn end;
            memset(&end, 0, sizeof end);
            end.op = ISA_OP_END;
            if (prog_append(&x->prog, core, eng, &end, 0, e)) return -1;
        }
    return 0;
}

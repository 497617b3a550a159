/* timing.c - closed-form instruction latencies (timing.h, docs/timing.md).
 * Pure functions of the chip config and the instruction; the simulator adds
 * contention on top, the compiler's cost model calls them directly. */
#include <math.h>
#include "isa/timing.h"
#include "isa/numerics.h"

static uint64_t ceil_div(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

int tim_mm_rate(const AtlChip *c, int dtype)
{
    switch (dtype) {
    case ISA_I8: return c->mm_rate_i8;
    case ISA_F16: return c->mm_rate_f16;
    case ISA_BF16: return c->mm_rate_bf16;
    case ISA_F32: return c->mm_rate_f32;
    default: return 0;
    }
}

uint64_t tim_mm_folds(const AtlChip *c, uint64_t k, uint64_t n)
{
    return ceil_div(k, (uint64_t)c->mm_rows) * ceil_div(n, (uint64_t)c->mm_cols);
}

/* Cycles of `folds` folds streaming m rows each, before the final -1.
 * Without fold_overlap every fold pays its own fill and drain (SCALE-Sim);
 * with it the next fold's rows follow the current fold's last row into the
 * array, so a fold after the first adds only its weight load (hidden by
 * double buffering when m >= R) and its m rows. */
static uint64_t fold_cycles(const AtlChip *c, uint64_t folds, uint64_t m)
{
    uint64_t R = (uint64_t)c->mm_rows, C = (uint64_t)c->mm_cols;
    if (!folds) return 0;
    uint64_t first = 2 * R + C + m - 2, next;
    if (c->mm_fold_overlap) next = c->mm_weight_double_buffer ? (m > R ? m : R) : R + m;
    else next = c->mm_weight_double_buffer ? R + C + m - 2 : first;
    return first + (folds - 1) * next;
}

uint64_t tim_mm_cycles(const AtlChip *c, int dtype, uint64_t m, uint64_t k, uint64_t n)
{
    uint64_t folds = tim_mm_folds(c, k, n);
    if (!folds || !m) return (uint64_t)c->mm_issue_cycles;
    return fold_cycles(c, folds, m) * (uint64_t)tim_mm_rate(c, dtype) - 1 + (uint64_t)c->mm_issue_cycles;
}

uint32_t tim_conv_out(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil, uint32_t pa, uint32_t pb)
{
    int64_t span = (int64_t)dil * ((int64_t)k - 1) + 1, full = (int64_t)in + pa + pb;
    if (!stride || !k || span > full) return 0;
    return (uint32_t)((full - span) / stride + 1);
}

static void conv_dims(const AtlInsn *in, uint64_t *m, uint64_t *k, uint64_t *n, uint64_t *g)
{
    uint32_t oh = tim_conv_out(in->ih, in->kh, in->sh, in->dh, in->pad_top, in->pad_bottom);
    uint32_t ow = tim_conv_out(in->iw, in->kw, in->sw, in->dw, in->pad_left, in->pad_right);
    uint64_t groups = in->groups ? in->groups : 1;
    *g = groups;
    *m = (uint64_t)oh * ow;
    *k = (uint64_t)in->kh * in->kw * (in->cin / groups);
    *n = in->cout / groups;
}

uint64_t tim_conv_cycles(const AtlChip *c, const AtlInsn *in)
{
    uint64_t m, k, n, g;
    conv_dims(in, &m, &k, &n, &g);
    uint64_t folds = tim_mm_folds(c, k, n) * g;
    if (!folds || !m) return (uint64_t)c->mm_issue_cycles;
    return fold_cycles(c, folds, m) * (uint64_t)tim_mm_rate(c, in->dtype) - 1 + (uint64_t)c->mm_issue_cycles;
}

uint64_t tim_mm_macs(const AtlInsn *in) { return (uint64_t)in->m * in->k * in->n; }

uint64_t tim_conv_macs(const AtlInsn *in)
{
    uint64_t m, k, n, g;
    conv_dims(in, &m, &k, &n, &g);
    return g * m * k * n;
}

int tim_elems_per_lane(int dtype)
{
    int s = isa_dtype_size(dtype);
    return s ? 4 / s : 1;
}

/* The ops of each class with a key of its own; every other elementwise op
 * is in the add/mul class. */
static const struct {
    int op, cls;
} vec_op_classes[] = {
    {ISA_OP_V_DIV, TIM_VEC_DIV}, {ISA_OP_V_MOD, TIM_VEC_DIV},
    {ISA_OP_V_EQ, TIM_VEC_COMPARE}, {ISA_OP_V_LT, TIM_VEC_COMPARE}, {ISA_OP_V_LE, TIM_VEC_COMPARE},
    {ISA_OP_V_MAX, TIM_VEC_COMPARE}, {ISA_OP_V_MIN, TIM_VEC_COMPARE}, {ISA_OP_V_SEL, TIM_VEC_COMPARE},
    {ISA_OP_V_RSUM, TIM_VEC_REDUCE}, {ISA_OP_V_RMAX, TIM_VEC_REDUCE}, {ISA_OP_V_RMIN, TIM_VEC_REDUCE},
    {ISA_OP_V_RARGMAX, TIM_VEC_REDUCE}, {ISA_OP_V_RARGMIN, TIM_VEC_REDUCE},
    {ISA_OP_V_MAXPOOL, TIM_VEC_REDUCE}, {ISA_OP_V_AVGPOOL, TIM_VEC_REDUCE},
};

int tim_vec_class(int op)
{
    if (num_op_is_transcendental(op)) return TIM_VEC_TRANSCENDENTAL;
    for (size_t i = 0; i < sizeof vec_op_classes / sizeof vec_op_classes[0]; i++)
        if (vec_op_classes[i].op == op) return vec_op_classes[i].cls;
    return TIM_VEC_ARITH;
}

uint64_t tim_vec_class_cycles(const AtlChip *c, int cls)
{
    switch (cls) {
    case TIM_VEC_DIV: return (uint64_t)c->vec_div_cycles;
    case TIM_VEC_TRANSCENDENTAL: return (uint64_t)c->vec_transcendental_cycles;
    case TIM_VEC_REDUCE: return (uint64_t)c->vec_reduce_cycles;
    case TIM_VEC_COMPARE: return (uint64_t)c->vec_compare_cycles;
    default: return (uint64_t)c->vec_arith_cycles;
    }
}

uint64_t tim_vec_cycles(const AtlChip *c, int op, int dtype, uint64_t elems)
{
    uint64_t per = (uint64_t)c->vec_lanes * (uint64_t)tim_elems_per_lane(dtype);
    return ceil_div(elems, per) * tim_vec_class_cycles(c, tim_vec_class(op)) + (uint64_t)c->vec_issue_cycles;
}

uint64_t tim_pool_cycles(const AtlChip *c, const AtlInsn *in)
{
    uint32_t oh = tim_conv_out(in->ih, in->kh, in->sh, 1, in->pad_top, in->pad_bottom);
    uint32_t ow = tim_conv_out(in->iw, in->kw, in->sw, 1, in->pad_left, in->pad_right);
    uint64_t per = (uint64_t)c->vec_lanes * (uint64_t)tim_elems_per_lane(in->dtype);
    return ceil_div((uint64_t)oh * ow * in->cin, per) * in->kh * in->kw * (uint64_t)c->vec_reduce_cycles +
           (uint64_t)c->vec_issue_cycles;
}

uint64_t tim_reduce_cycles(const AtlChip *c, int dtype, uint64_t elems)
{
    uint64_t per = (uint64_t)c->vec_lanes * (uint64_t)tim_elems_per_lane(dtype);
    return ceil_div(elems, per) * (uint64_t)c->vec_reduce_cycles + (uint64_t)c->vec_issue_cycles;
}

uint64_t tim_requant_cycles(const AtlChip *c, uint64_t elems)
{
    return ceil_div(elems, (uint64_t)c->vec_lanes) + (uint64_t)c->vec_issue_cycles;
}

uint64_t tim_cast_cycles(const AtlChip *c, int dtype, int otype, uint64_t elems)
{
    int wide = isa_dtype_size(dtype) >= isa_dtype_size(otype) ? dtype : otype;
    uint64_t per = (uint64_t)c->vec_lanes * (uint64_t)tim_elems_per_lane(wide);
    return ceil_div(elems, per) + (uint64_t)c->vec_issue_cycles;
}

static uint64_t shape_elems(const AtlInsn *in)
{
    return (uint64_t)in->shape[0] * in->shape[1] * in->shape[2] * in->shape[3];
}

uint64_t tim_compute_cycles(const AtlChip *c, const AtlInsn *in)
{
    if (in->op >= ISA_NUM_OPS) return 0;
    switch (isa_ops[in->op].format) {
    case ISA_FMT_MM: return tim_mm_cycles(c, in->dtype, in->m, in->k, in->n);
    case ISA_FMT_CONV: return tim_conv_cycles(c, in);
    case ISA_FMT_VBIN:
    case ISA_FMT_VUN: return tim_vec_cycles(c, in->op, in->dtype, shape_elems(in));
    case ISA_FMT_VPOOL: return tim_pool_cycles(c, in);
    case ISA_FMT_VRED:
    case ISA_FMT_VARG: return tim_reduce_cycles(c, in->dtype, shape_elems(in));
    case ISA_FMT_VREQ: return tim_requant_cycles(c, shape_elems(in));
    case ISA_FMT_VCAST: return tim_cast_cycles(c, in->dtype, in->otype, shape_elems(in));
    default: return 0;
    }
}

uint64_t tim_occupancy(uint64_t bytes, double bw)
{
    double r = (double)bytes / bw - 1e-9;
    return r <= 0 ? 0 : (uint64_t)ceil(r);
}

static int log2_ceil(uint64_t x)
{
    int b = 0;
    while ((1ull << b) < x) b++;
    return b;
}

int tim_dram_fields(const AtlChip *c, int lo[TIM_DRAM_FIELDS], int bits[TIM_DRAM_FIELDS])
{
    /* each mapping's fields from the least significant bit up, named as
     * Ramulator2's linear mappers (most significant field first) */
    static const int order[][TIM_DRAM_FIELDS] = {
        [CFG_MAP_ROBARACOCH] = {TIM_DRAM_CH, TIM_DRAM_COL, TIM_DRAM_RANK, TIM_DRAM_BG, TIM_DRAM_BANK, TIM_DRAM_ROW},
        [CFG_MAP_CHRABAROCO] = {TIM_DRAM_COL, TIM_DRAM_ROW, TIM_DRAM_BANK, TIM_DRAM_BG, TIM_DRAM_RANK, TIM_DRAM_CH},
    };
    int count[TIM_DRAM_FIELDS] = {c->dram_channels, c->dram_ranks, c->dram_bankgroups, c->dram_banks, c->dram_rows,
                                  c->dram_access_bytes > 0 ? c->dram_row_bytes / c->dram_access_bytes : 1};
    int m = c->dram_mapping >= 0 && c->dram_mapping < (int)(sizeof order / sizeof order[0]) ? c->dram_mapping : 0, at = 0;
    for (int i = 0; i < TIM_DRAM_FIELDS; i++) {
        int f = order[m][i];
        lo[f] = at;
        bits[f] = log2_ceil((uint64_t)(count[f] > 0 ? count[f] : 1));
        at += bits[f];
    }
    return at;
}

void tim_lmem_bytes(const AtlInsn *in, uint64_t *rd, uint64_t *wr)
{
    uint64_t es = (uint64_t)isa_dtype_size(in->dtype), n = shape_elems(in);
    *rd = *wr = 0;
    if (in->op >= ISA_NUM_OPS) return;
    int fmt = isa_ops[in->op].format;
    switch (fmt) {
    case ISA_FMT_MM:
        *wr = (uint64_t)in->m * in->n * 4;
        *rd = ((uint64_t)in->m * in->k + (uint64_t)in->k * in->n) * es + (in->acc ? *wr : 0);
        return;
    case ISA_FMT_CONV: {
        uint64_t oh = tim_conv_out(in->ih, in->kh, in->sh, in->dh, in->pad_top, in->pad_bottom);
        uint64_t ow = tim_conv_out(in->iw, in->kw, in->sw, in->dw, in->pad_left, in->pad_right);
        uint64_t x = (uint64_t)in->ih * in->iw * in->cin * es;
        uint64_t w = (uint64_t)in->kh * in->kw * (in->groups ? in->cin / in->groups : 0) * in->cout * es;
        *wr = oh * ow * in->cout * 4;
        *rd = x + w + (in->acc ? *wr : 0);
        return;
    }
    case ISA_FMT_VBIN:
    case ISA_FMT_VUN:
    case ISA_FMT_VCAST:
        *rd = n * es * (fmt == ISA_FMT_VBIN ? (in->op == ISA_OP_V_SEL ? 3 : 2) : 1);
        *wr = n * (fmt == ISA_FMT_VCAST ? (uint64_t)isa_dtype_size(in->otype) : es);
        return;
    case ISA_FMT_VPOOL: {
        uint64_t oh = tim_conv_out(in->ih, in->kh, in->sh, 1, in->pad_top, in->pad_bottom);
        uint64_t ow = tim_conv_out(in->iw, in->kw, in->sw, 1, in->pad_left, in->pad_right);
        *rd = (uint64_t)in->ih * in->iw * in->cin * es;
        *wr = oh * ow * in->cin * es;
        return;
    }
    case ISA_FMT_VRED:
    case ISA_FMT_VARG: {
        uint64_t on = in->axis < 4 && in->shape[in->axis] ? n / in->shape[in->axis] : 0;
        *rd = n * es;
        *wr = on * (fmt == ISA_FMT_VARG ? 4 : (uint64_t)isa_dtype_size(in->otype));
        return;
    }
    case ISA_FMT_VREQ:
        *rd = n * 4 + (in->per_channel ? in->shape[3] : 1) * 8;
        *wr = n;
        return;
    default: return;
    }
}

/* Sets bits [from, to) of banks (to <= 256), a word at a time. */
static void set_bank_range(uint64_t banks[4], uint64_t from, uint64_t to)
{
    while (from < to) {
        uint64_t wd = from >> 6, end = (wd + 1) << 6 < to ? (wd + 1) << 6 : to, n = end - from;
        banks[wd] |= (n == 64 ? ~0ull : ((1ull << n) - 1)) << (from & 63);
        from = end;
    }
}

void tim_lmem_span(const AtlChip *c, uint64_t lo, uint64_t hi, uint64_t banks[4])
{
    uint64_t w = (uint64_t)c->lmem_bank_width, nbanks = (uint64_t)c->lmem_banks, row = lo / w;
    uint64_t rows = (lo - row * w + (hi - lo) + w - 1) / w, nb = rows < nbanks ? rows : nbanks;
    /* banks row, row + 1, ... (mod nbanks): one range, or two where it wraps */
    uint64_t b0 = nb ? row % nbanks : 0, first = b0 + nb < nbanks ? b0 + nb : nbanks;
    set_bank_range(banks, b0, first);
    set_bank_range(banks, 0, nb - (first - b0));
}

uint64_t tim_lmem_occ(const AtlChip *c, const uint64_t banks[4], uint64_t bytes)
{
    int nb = 0;
    for (int i = 0; i < 4; i++) nb += __builtin_popcountll(banks[i]);
    return nb ? tim_occupancy(bytes, (double)nb * c->lmem_bank_bytes_per_cycle) : 0;
}

void tim_dram_walk(const uint32_t shape[4], const int32_t st[4], uint32_t oshape[4], int32_t ost[4])
{
    int order[4] = {0, 1, 2, 3};
    /* insertion sort, outermost first: size 1 before all, then by |stride| descending; stable */
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0; j--) {
            int a = order[j - 1], b = order[j];
            uint64_t sa = (uint64_t)(st[a] < 0 ? -(int64_t)st[a] : st[a]), sb = (uint64_t)(st[b] < 0 ? -(int64_t)st[b] : st[b]);
            int b_first = shape[a] > 1 && (shape[b] <= 1 || sb > sa);
            if (!b_first) break;
            order[j - 1] = b;
            order[j] = a;
        }
    for (int i = 0; i < 4; i++) { oshape[i] = shape[order[i]]; ost[i] = st[order[i]]; }
}

uint64_t tim_dram_region_align(const AtlChip *c)
{
    uint64_t al = (uint64_t)c->dram_interleave * (uint64_t)c->dram_channels;
    if (al < 4096) al = 4096;
    if (c->dram_model == CFG_DRAM_BANKED) {
        int lo[TIM_DRAM_FIELDS], bits[TIM_DRAM_FIELDS];
        tim_dram_fields(c, lo, bits);
        uint64_t below = (uint64_t)1 << (lo[TIM_DRAM_ROW] + log2_ceil((uint64_t)c->dram_access_bytes));
        if (below > al) al = below;
    }
    return al;
}

double tim_dram_bytes_per_cycle(const AtlChip *c) { return c->dram_gbps * 1e3 / c->freq_mhz; }
double tim_dram_channel_bytes_per_cycle(const AtlChip *c) { return tim_dram_bytes_per_cycle(c) / c->dram_channels; }

uint64_t tim_dram_latency(const AtlChip *c)
{
    return (uint64_t)ceil(c->dram_latency_ns * c->freq_mhz / 1000.0 - 1e-9) + (uint64_t)c->noc_latency;
}

static double level_bw(const AtlChip *c, int space)
{
    switch (space) {
    case ISA_SPACE_DRAM: {
        double d = tim_dram_bytes_per_cycle(c), n = c->noc_bytes_per_cycle;
        return d < n ? d : n;
    }
    case ISA_SPACE_SRAM: return c->sram_bytes_per_cycle;
    case ISA_SPACE_PEER: return c->sram_bytes_per_cycle < c->noc_link_bytes_per_cycle ? c->sram_bytes_per_cycle : c->noc_link_bytes_per_cycle;
    default: {
        double p = c->dma_lmem_bytes_per_cycle, b = (double)c->lmem_banks * c->lmem_bank_bytes_per_cycle;
        return p < b ? p : b;
    }
    }
}

static uint64_t level_latency(const AtlChip *c, int space, int hops)
{
    switch (space) {
    case ISA_SPACE_DRAM: return tim_dram_latency(c);
    case ISA_SPACE_SRAM: return (uint64_t)c->sram_latency;
    case ISA_SPACE_PEER: return (uint64_t)c->sram_latency + (uint64_t)hops * (uint64_t)c->noc_hop_cycles;
    default: return 0;
    }
}

double tim_dma_path_bw(const AtlChip *c, int dst, int src)
{
    double a = level_bw(c, dst), b = level_bw(c, src);
    return a < b ? a : b;
}

uint64_t tim_dma_route_latency(const AtlChip *c, int dst, int src, int hops)
{
    uint64_t a = level_latency(c, dst, hops), b = level_latency(c, src, hops);
    return a > b ? a : b;
}

uint64_t tim_dma_path_latency(const AtlChip *c, int dst, int src)
{
    return tim_dma_route_latency(c, dst, src, 0);
}

uint64_t tim_dma_route_cycles(const AtlChip *c, int dst, int src, int hops, uint64_t bytes)
{
    double bw = tim_dma_path_bw(c, dst, src);
    uint64_t bb = (uint64_t)c->dma_burst_bytes, full = bytes / bb, rest = bytes % bb;
    uint64_t t = full * tim_occupancy(bb, bw);
    if (rest) t += tim_occupancy(rest, bw);
    return (uint64_t)c->dma_issue_cycles + tim_dma_route_latency(c, dst, src, hops) + t;
}

uint64_t tim_dma_cycles(const AtlChip *c, int dst, int src, uint64_t bytes)
{
    return tim_dma_route_cycles(c, dst, src, 0, bytes);
}

int tim_noc_mesh_cols(const AtlChip *c)
{
    if (c->noc_mesh_cols > 0) return c->noc_mesh_cols;
    int best = 1;
    for (int d = 1; d <= c->clusters; d++) {
        if (c->clusters % d) continue;
        double r = sqrt((double)c->clusters), da = fabs((double)d - r), db = fabs((double)best - r);
        if (da < db) best = d;   /* ascending d: a tie keeps the smaller */
    }
    return best;
}

/* Appends the link leaving `cluster` in direction dir. */
static void route_step(int *links, int n, int cluster, int dir)
{
    if (links && n < TIM_NOC_MAX_HOPS) links[n] = cluster * TIM_NOC_DIRS + dir;
}

int tim_noc_route(const AtlChip *c, int from, int to, int *links)
{
    int n = 0, k = c->clusters;
    if (from == to || k < 2) return 0;
    if (c->noc_topology == CFG_NOC_RING) {
        int fwd = ((to - from) % k + k) % k, back = k - fwd;
        int dir = fwd <= back ? 0 : 1, step = dir ? k - 1 : 1;
        for (int at = from; at != to; at = (at + step) % k) route_step(links, n++, at, dir);
        return n;
    }
    int cols = tim_noc_mesh_cols(c), x = from % cols, y = from / cols, tx = to % cols, ty = to / cols;
    while (x != tx) { route_step(links, n++, y * cols + x, x < tx ? 0 : 1); x += x < tx ? 1 : -1; }
    while (y != ty) { route_step(links, n++, y * cols + x, y < ty ? 2 : 3); y += y < ty ? 1 : -1; }
    return n;
}

uint64_t tim_gather_index_cycles(const AtlChip *c, int idx_space, uint64_t n)
{
    /* the table is read into the engine before the rows it names */
    return tim_dma_path_latency(c, idx_space, idx_space) + tim_occupancy(4 * n, tim_dma_path_bw(c, idx_space, idx_space));
}

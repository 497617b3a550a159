/* test_schedule.c - the schedule (compiler/schedule/) and slice inference
 * (compiler/lower/slice.c) on hand-made layers.
 *
 * Schedule: tiles distributed over a core set in balanced blocks with
 * runs kept together; each core's time-step table in the 3-stage order
 * (L0, L1 C0 S0, L2 C1 S1, ..., C(n-1) S(n-1), BARRIER) with alternating
 * slots, the LOADED/COMPUTED semaphores and weight-load skipping; the
 * multicast MCAST/WAIT actions; DMA-only COPY actions; the barrier of the
 * set with its own id and count; and the emitter writing exactly the
 * table's order into the streams (the cost model replays the same table:
 * test_bk_cost.c).
 * Slice inference: halos of strided, padded, dilated windows clipped at
 * the borders, grouped channels, numpy broadcasting, whole inputs. */
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "compiler/cost/cost.h"
#include "compiler/alloc/alloc.h"
#include "compiler/emit/emit.h"
#include "compiler/lower/lower.h"
#include "compiler/ops/infer.h"
#include "isa/config.h"

/* Tile t: one load from DRAM offset 64 t, one v.relu, one store to 4096 +
 * 64 t (so a stream shows which tile each DMA belongs to). */
static int tile_gen(BkCtx *c, const BkLayer *ly, int tile, uint64_t slot, BkCode *code, AtlErr *e)
{
    (void)c; (void)ly; (void)e;
    uint32_t sh[4] = {1, 1, 1, 16};
    int64_t st[4];
    bk_compact(sh, st);
    AtlInsn ld = bk_dma(ISA_F32, ISA_SPACE_LMEM, slot, ISA_SPACE_DRAM, bk_addr(ABM_REGION_ACTIVATIONS, 64u * tile), sh, st, st);
    AtlInsn op = bk_vun(ISA_OP_V_RELU, ISA_F32, slot, slot, sh, st, st, 0, 0);
    AtlInsn sto = bk_dma(ISA_F32, ISA_SPACE_DRAM, bk_addr(ABM_REGION_ACTIVATIONS, 4096 + 64u * tile), ISA_SPACE_LMEM,
                         slot, sh, st, st);
    return bk_code_ld(code, &ld, 1) || bk_code_cp(code, &op) || bk_code_st(code, &sto) ? -1 : 0;
}

static int prologue(BkCtx *c, const BkLayer *ly, BkCode *code, AtlErr *e)
{
    (void)c; (void)ly; (void)e;
    uint32_t sh[4] = {1, 1, 1, 64};
    int64_t st[4];
    bk_compact(sh, st);
    AtlInsn w = bk_dma(ISA_F32, ISA_SPACE_LMEM, 0, ISA_SPACE_DRAM, bk_addr(ABM_REGION_WEIGHTS, 0), sh, st, st);
    return bk_code_st(code, &w);
}

typedef struct Fix {
    AtlChip chip;
    BkCtx c;
    BkLayer ly;
    BkSegment sg;
    BkTable tab;
} Fix;

static int setup(Fix *f, int ntiles, int run, BkCoreSet cores)
{
    AtlErr e;
    memset(f, 0, sizeof *f);
    if (cfg_load("configs/a1.ini", &f->chip, &e)) return -1;
    f->c.chip = &f->chip;
    f->c.ncores = cores.count;
    f->ly.node = -1;
    f->ly.slot_off = 1024;
    f->ly.slot_size = 4096;
    f->ly.gen = tile_gen;
    f->sg.layer = &f->ly;
    f->sg.cores = cores;
    f->sg.bar = (BkBarrier){.id = 5, .count = ISA_NUM_ENGINES * cores.count, .scope = ISA_SCOPE_CHIP, .set = cores};
    return bk_set_tiles(&f->ly, ntiles, run, &e) || bk_sched_distribute(&f->sg, &e) ? -1 : 0;
}

static void teardown(Fix *f)
{
    bk_table_free(&f->tab);
    bk_segment_free(&f->sg);
    bk_layer_free(&f->ly);
}

/* The table as a string: L<tile>/<slot>[s] C<tile>/<slot> S<tile>/<slot> ... */
static void table_text(const BkTable *t, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < t->n && k + 16 < n; i++) {
        const BkAction *a = &t->a[i];
        static const char kinds[] = "MWLCSPB";
        if (a->kind == BK_ACT_MCAST || a->kind == BK_ACT_WAIT || a->kind == BK_ACT_BARRIER)
            k += (size_t)snprintf(buf + k, n - k, "%s%c", k ? " " : "", kinds[a->kind]);
        else
            k += (size_t)snprintf(buf + k, n - k, "%s%c%d/%d%s", k ? " " : "", kinds[a->kind], a->tile, a->slot,
                                  a->skip_w ? "s" : "");
    }
}

TEST(tiles_go_to_cores_in_balanced_blocks)
{
    Fix f;
    REQUIRE(setup(&f, 5, 1, (BkCoreSet){0, 2}) == 0);
    int want[5] = {0, 0, 0, 1, 1};
    for (int t = 0; t < 5; t++) CHECK_EQ_INT(f.sg.tile_core[t], want[t]);
    CHECK_EQ_INT(f.sg.cores_used, 2);
    teardown(&f);
    /* runs of 2 stay on one core; a set starting at core 4 */
    REQUIRE(setup(&f, 8, 2, (BkCoreSet){4, 3}) == 0);
    int want2[8] = {4, 4, 4, 4, 5, 5, 6, 6};
    for (int t = 0; t < 8; t++) CHECK_EQ_INT(f.sg.tile_core[t], want2[t]);
    teardown(&f);
}

TEST(table_is_the_three_stage_pipeline)
{
    Fix f;
    AtlErr e;
    REQUIRE(setup(&f, 5, 1, (BkCoreSet){0, 2}) == 0);
    int keys[5] = {7, 7, 7, -1, -1};
    memcpy(f.ly.tile_wkey, keys, sizeof keys);
    REQUIRE(bk_sched_table(&f.c, &f.sg, 0, &f.tab, &e) == 0);
    char txt[256];
    table_text(&f.tab, txt, sizeof txt);
    /* tile 2 reuses slot 0, which still holds key 7's weights */
    CHECK_STR_CONTAINS(txt, "L0/0 L1/1 C0/0 S0/0 L2/0s C1/1 S1/1 C2/0 S2/0 B");
    for (int i = 0; i < f.tab.n; i++) {
        const BkAction *a = &f.tab.a[i];
        if (a->kind == BK_ACT_LOAD) { CHECK_EQ_INT(a->signal, BK_SEM_LOADED + a->slot); CHECK_EQ_INT(a->wait, -1); }
        if (a->kind == BK_ACT_COMPUTE) {
            CHECK_EQ_INT(a->wait, BK_SEM_LOADED + a->slot);
            CHECK_EQ_INT(a->signal, BK_SEM_COMPUTED + a->slot);
        }
        if (a->kind == BK_ACT_STORE) { CHECK_EQ_INT(a->wait, BK_SEM_COMPUTED + a->slot); CHECK_EQ_INT(a->signal, -1); }
    }
    /* a core of the set without tiles only joins the barrier */
    teardown(&f);
    REQUIRE(setup(&f, 1, 1, (BkCoreSet){0, 2}) == 0);
    REQUIRE(bk_sched_table(&f.c, &f.sg, 1, &f.tab, &e) == 0);
    table_text(&f.tab, txt, sizeof txt);
    CHECK(!strcmp(txt, "B"));
    teardown(&f);
}

TEST(multicast_and_copies)
{
    Fix f;
    AtlErr e;
    char txt[256];
    /* a1: 4 cores per cluster; 6 tiles on cores 0..5: cluster 0 runs 0..3, cluster 1 runs 4, 5 */
    REQUIRE(setup(&f, 6, 1, (BkCoreSet){0, 6}) == 0);
    f.ly.mcast = 1;
    f.ly.prologue = prologue;
    REQUIRE(bk_sched_table(&f.c, &f.sg, 4, &f.tab, &e) == 0);
    table_text(&f.tab, txt, sizeof txt);
    CHECK(!strncmp(txt, "M W L4/0", 8));
    CHECK_EQ_INT(f.tab.a[0].mask, 0x3);   /* cores 4 and 5 of cluster 1 */
    CHECK_EQ_INT(f.tab.a[0].signal, BK_SEM_WEIGHTS);
    CHECK_EQ_INT(f.tab.a[1].wait, BK_SEM_WEIGHTS);
    REQUIRE(bk_sched_table(&f.c, &f.sg, 5, &f.tab, &e) == 0);
    table_text(&f.tab, txt, sizeof txt);
    CHECK(!strncmp(txt, "W L5/0", 6));
    teardown(&f);
    REQUIRE(setup(&f, 3, 1, (BkCoreSet){0, 1}) == 0);
    f.ly.direct = 1;
    REQUIRE(bk_sched_table(&f.c, &f.sg, 0, &f.tab, &e) == 0);
    table_text(&f.tab, txt, sizeof txt);
    CHECK(!strcmp(txt, "P0/0 P1/0 P2/0 B"));
    teardown(&f);
}

/* The DMA stream of core 0 holds the table's loads and stores in its order,
 * with the semaphores on the right instructions and the set's barrier. */
TEST(emitter_writes_the_table_order)
{
    Fix f;
    AtlErr e;
    REQUIRE(setup(&f, 6, 1, (BkCoreSet){0, 2}) == 0);
    BkEmit x;
    REQUIRE(bk_emit_init(&x, &f.c, &e) == 0);
    REQUIRE(bk_emit_segment(&x, &f.sg, &e) == 0);
    const AtlStream *dma = prog_stream(&x.prog, 0, ISA_ENGINE_DMA);
    /* L0 L1 S0 L2 S1 S2 barrier: tile index from the DRAM offset, load/store from the space */
    const int tile[] = {0, 1, 0, 2, 1, 2};
    const int is_store[] = {0, 0, 1, 0, 1, 1};
    REQUIRE(dma->count == 7);
    for (int i = 0; i < 6; i++) {
        const AtlInsn *in = &dma->insns[i];
        uint64_t off = (is_store[i] ? in->dst : in->src) & 0xffffffffu;
        CHECK_EQ_INT(in->dst_space == ISA_SPACE_DRAM, is_store[i]);
        CHECK_EQ_INT((int)((off - (is_store[i] ? 4096 : 0)) / 64), tile[i]);
        int slot = tile[i] % 2;
        CHECK_EQ_INT(in->signal, is_store[i] ? 0 : BK_SEM_LOADED + slot + 1);
        CHECK_EQ_INT(in->wait, is_store[i] ? BK_SEM_COMPUTED + slot + 1 : 0);
        if (!is_store[i]) CHECK_EQ_INT(in->dst, f.ly.slot_off + (uint64_t)slot * f.ly.slot_size);
    }
    CHECK_EQ_INT(dma->insns[6].op, ISA_OP_BARRIER);
    CHECK_EQ_INT(dma->insns[6].bar_id, 5);
    CHECK_EQ_INT(dma->insns[6].bar_count, ISA_NUM_ENGINES * 2);
    const AtlStream *vec = prog_stream(&x.prog, 0, ISA_ENGINE_VEC);
    REQUIRE(vec->count == 4);   /* three computes and the barrier */
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(vec->insns[i].wait, BK_SEM_LOADED + i % 2 + 1);
    /* the cost model replays the same segment */
    REQUIRE(bk_cost_segment(&f.c, &f.sg, UINT64_MAX, &e) == 0);
    CHECK(f.sg.est_cycles > 0 && f.sg.est_dma > 0 && f.sg.est_compute > 0);
    bk_emit_free(&x);
    teardown(&f);
}

/* ---- slice inference ---- */

typedef struct SliceFix {
    IrGraph g;
    BkCtx c;
    BkLayer ly;
    int gelu[4];
} SliceFix;

static int slice_setup(SliceFix *s, const char *op, const int64_t *x_dims, int xr, const int64_t *y_dims, int yr)
{
    AtlErr e;
    memset(s, 0, sizeof *s);
    ir_init(&s->g);
    if (ir_add_input(&s->g, "x", IR_F32, xr, x_dims, &e) < 0 || ir_add_input(&s->g, "w", IR_F32, yr, y_dims, &e) < 0) return -1;
    int n = ir_add_op(&s->g, op, "n", "x,w", "y", &e);
    if (n < 0) return -1;
    s->c.g = &s->g;
    for (int i = 0; i < 4; i++) s->gelu[i] = -1;
    s->c.gelu_src = s->gelu;
    s->ly.node = n;
    return 0;
}

static BkBox box4(int64_t n0, int64_t c0, int64_t h0, int64_t w0, int64_t nn, int64_t cn, int64_t hn, int64_t wn)
{
    BkBox b = {4, {n0, c0, h0, w0}, {nn, cn, hn, wn}};
    return b;
}

TEST(window_halos_clip_at_the_borders)
{
    SliceFix s;
    AtlErr e;
    int64_t xd[4] = {2, 4, 8, 7}, wd[4] = {6, 2, 3, 3};
    REQUIRE(slice_setup(&s, "Conv", xd, 4, wd, 4) == 0);
    BkLow *l = &s.ly.lw;
    l->kind = BK_K_CONV;
    l->C = 4; l->OC = 6; l->groups = 2; l->H = 8; l->W = 7;
    l->kh = 3; l->kw = 3; l->sh = 2; l->sw = 1; l->dh = 1; l->dw = 2; l->pt = 1; l->pl = 2;
    BkBox need, out = box4(1, 3, 0, 0, 1, 2, 2, 3);
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    /* rows: outputs 0..1 at stride 2, pad 1 -> inputs -1..3, clipped to 0..3 */
    CHECK_EQ_INT(need.lo[2], 0); CHECK_EQ_INT(need.n[2], 4);
    /* columns: outputs 0..2, pad 2, dilation 2 -> inputs -2..4, clipped to 0..4 */
    CHECK_EQ_INT(need.lo[3], 0); CHECK_EQ_INT(need.n[3], 5);
    /* output channels 3, 4 are group 1 (3 per group) -> input channels 2, 3 */
    CHECK_EQ_INT(need.lo[1], 2); CHECK_EQ_INT(need.n[1], 2);
    CHECK_EQ_INT(need.lo[0], 1); CHECK_EQ_INT(need.n[0], 1);
    /* the last rows: output row 3 -> inputs 5..7 */
    out = box4(0, 2, 3, 4, 2, 2, 1, 1);
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.lo[2], 5); CHECK_EQ_INT(need.n[2], 3);
    CHECK_EQ_INT(need.lo[3], 2); CHECK_EQ_INT(need.n[3], 5);
    CHECK_EQ_INT(need.lo[1], 0); CHECK_EQ_INT(need.n[1], 4);   /* channels 2, 3 span both groups */
    /* the weights: the output channels' rows */
    REQUIRE(bk_slice_need(&s.c, &s.ly, 1, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.lo[0], 2); CHECK_EQ_INT(need.n[0], 2);
    CHECK_EQ_INT(need.n[1], 2); CHECK_EQ_INT(need.n[2], 3);
    /* the padding left outside the loaded part */
    BkSpan sp = bk_window_span(3, 1, 2, 1, 1, 3, 7);
    CHECK_EQ_INT(sp.a, 5); CHECK_EQ_INT(sp.n, 2); CHECK_EQ_INT(sp.pa, 0); CHECK_EQ_INT(sp.pb, 1);
    CHECK_EQ_INT(bk_window_extent(4, 2, 1, 3, 100), 9);
    CHECK_EQ_INT(bk_window_extent(4, 2, 1, 3, 5), 5);
    ir_free(&s.g);
}

TEST(elementwise_broadcasts_and_others_read_all)
{
    SliceFix s;
    AtlErr e;
    int64_t xd[4] = {1, 4, 5, 6}, bd[3] = {4, 1, 6};
    REQUIRE(slice_setup(&s, "Add", xd, 4, bd, 3) == 0);
    s.ly.lw.kind = BK_K_ELEM;
    BkBox need, out = box4(0, 1, 2, 3, 1, 2, 3, 3);
    REQUIRE(bk_slice_need(&s.c, &s.ly, 1, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.rank, 3);
    CHECK_EQ_INT(need.lo[0], 1); CHECK_EQ_INT(need.n[0], 2);
    CHECK_EQ_INT(need.lo[1], 0); CHECK_EQ_INT(need.n[1], 1);
    CHECK_EQ_INT(need.lo[2], 3); CHECK_EQ_INT(need.n[2], 3);
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    for (int d = 0; d < 4; d++) { CHECK_EQ_INT(need.lo[d], out.lo[d]); CHECK_EQ_INT(need.n[d], out.n[d]); }
    /* a reduction reads its whole input whatever the box */
    s.ly.lw.kind = BK_K_REDUCE;
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    for (int d = 0; d < 4; d++) { CHECK_EQ_INT(need.lo[d], 0); CHECK_EQ_INT(need.n[d], xd[d]); }
    CHECK(bk_slice_need(&s.c, &s.ly, 5, &out, &need, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "no input 5");
    ir_free(&s.g);
}

/* Concat: an input reads the part of the output box along the axis that
 * it fills, at its own indices; a nearest 2 x 3 upsampling reads rows
 * o / 2 and columns o / 3 (uneven boxes starting at odd rows). */
TEST(concat_and_resize_need_their_part)
{
    SliceFix s;
    AtlErr e;
    int64_t xd[4] = {1, 4, 5, 6}, wd[4] = {1, 3, 5, 6};
    REQUIRE(slice_setup(&s, "Concat", xd, 4, wd, 4) == 0);
    REQUIRE(ir_set_attr_int(&s.g, s.ly.node, "axis", 1, &e) == 0);
    s.ly.lw.kind = BK_K_MOVE;
    BkBox need, out = box4(0, 2, 1, 2, 1, 4, 3, 4);   /* channels 2..5 of 7 */
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.lo[1], 2); CHECK_EQ_INT(need.n[1], 2);
    CHECK_EQ_INT(need.lo[2], 1); CHECK_EQ_INT(need.n[2], 3);
    CHECK_EQ_INT(need.lo[3], 2); CHECK_EQ_INT(need.n[3], 4);
    REQUIRE(bk_slice_need(&s.c, &s.ly, 1, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.lo[1], 0); CHECK_EQ_INT(need.n[1], 2);
    out = box4(0, 5, 0, 0, 1, 2, 5, 6);   /* channels 5, 6: the second input's only */
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.n[1], 0);
    REQUIRE(bk_slice_need(&s.c, &s.ly, 1, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.lo[1], 1); CHECK_EQ_INT(need.n[1], 2);
    ir_free(&s.g);
    int64_t rd[1] = {0};
    REQUIRE(slice_setup(&s, "Resize", xd, 4, rd, 1) == 0);
    s.ly.lw.kind = BK_K_MOVE;
    IrTensor *y = &s.g.t[s.g.nodes[s.ly.node].out[0]];
    int64_t yd[4] = {1, 4, 10, 18};
    y->ndim = 4;
    memcpy(y->dims, yd, sizeof yd);
    out = box4(0, 1, 3, 4, 1, 2, 4, 5);   /* rows 3..6, columns 4..8 */
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    CHECK_EQ_INT(need.lo[1], 1); CHECK_EQ_INT(need.n[1], 2);
    CHECK_EQ_INT(need.lo[2], 1); CHECK_EQ_INT(need.n[2], 3);
    CHECK_EQ_INT(need.lo[3], 1); CHECK_EQ_INT(need.n[3], 2);
    /* a linear Resize not lowered by lower/resize.c (no bands: the
     * lowered case is test_backend_group's interpolating_resize_halo_rows):
     * the whole input */
    REQUIRE(ir_set_attr_str(&s.g, s.ly.node, "mode", "linear", &e) == 0);
    REQUIRE(bk_slice_need(&s.c, &s.ly, 0, &out, &need, &e) == 0);
    for (int d = 0; d < 4; d++) { CHECK_EQ_INT(need.lo[d], 0); CHECK_EQ_INT(need.n[d], xd[d]); }
    ir_free(&s.g);
}

/* Bands: the weight copies a conv's clusters load beyond one on the chip
 * (bk_band_weight_rereads, priced by the tile search): each cluster loads
 * every (output-channel chunk, K chunk) its tiles use once. */
TEST(band_weight_rereads_count_copies_per_cluster)
{
    Fix f;
    REQUIRE(setup(&f, 8, 1, (BkCoreSet){0, 16}) == 0);
    BkLow *l = &f.ly.lw;
    l->kind = BK_K_CONV;
    l->N = 1; l->C = 8; l->H = 8; l->W = 8; l->OC = 8; l->OH = 8; l->OW = 8;
    l->kh = l->kw = 3; l->groups = 1; l->es = 4;
    l->gchunk = 4; l->ngc = 2; l->rows = 4; l->nrc = 2; l->cols = 8; l->nwc = 1; l->kchunk = 4; l->nkc = 2;
    f.ly.band_cores = 16;
    f.ly.band_clusters = 4;
    uint64_t all = 8 * 8 * 9 * 4;
    /* every tile in cluster 0: one copy */
    for (int t = 0; t < 8; t++) f.sg.tile_core[t] = t % 4;
    CHECK_EQ_INT((int)bk_band_weight_rereads(&f.sg), 0);
    /* row chunk 0 in cluster 0, row chunk 1 in cluster 2: every chunk twice */
    for (int t = 0; t < 8; t++) f.sg.tile_core[t] = bk_tile_pos(l, t).rci * 8 + t % 4;
    CHECK_EQ_INT((int)bk_band_weight_rereads(&f.sg), (int)all);
    /* channel chunk g in cluster 2g + 1 (channel bands): once on the chip */
    for (int t = 0; t < 8; t++) f.sg.tile_core[t] = (2 * bk_tile_pos(l, t).gci + 1) * 4;
    CHECK_EQ_INT((int)bk_band_weight_rereads(&f.sg), 0);
    /* the second row chunk's K chunk 1 of channel chunk 1 in a second
     * cluster: that chunk's 4 output x 4 input channels again */
    for (int t = 0; t < 8; t++) {
        BkTilePos p = bk_tile_pos(l, t);
        f.sg.tile_core[t] = p.gci == 1 && p.kci == 1 && p.rci == 1 ? 12 : 0;
    }
    CHECK_EQ_INT((int)bk_band_weight_rereads(&f.sg), 4 * 4 * 9 * 4);
    /* a depthwise conv (a group a channel) spread over two clusters */
    l->groups = 8; l->kchunk = 1; l->nkc = 1; l->nrc = 4; l->rows = 2;
    for (int t = 0; t < 8; t++) f.sg.tile_core[t] = bk_tile_pos(l, t).rci < 2 ? 0 : 4;
    CHECK_EQ_INT((int)bk_band_weight_rereads(&f.sg), 8 * 9 * 4);
    /* a pool has no weights */
    l->kind = BK_K_POOL;
    CHECK_EQ_INT((int)bk_band_weight_rereads(&f.sg), 0);
    teardown(&f);
}

/* Bands: a window layer's cell owners (bk_band_distribute, worked out per
 * output-channel chunk) are those of the rule cell by cell: a cell written
 * by the tiles of one cluster only is that cluster's when inside its SRAM
 * window, -2 otherwise; without channel bands a row of several clusters
 * has no owner. Random convolutions, chunkings, windows and tile cores. */
static void band_cells_reference(const BkSegment *sg, int8_t *own, uint32_t *mask)
{
    const BkLayer *ly = sg->layer;
    const BkLow *l = &ly->lw;
    int H = l->OH, OC = l->OC, K = ly->band_clusters, cpc = ly->band_cores / K, run = ly->tile_run > 0 ? ly->tile_run : 1;
    memset(own, -1, (size_t)OC * H);
    memset(mask, 0, (size_t)H * sizeof *mask);
    for (int t = 0; t < ly->ntiles; t += run) {
        BkTilePos p = bk_tile_pos(l, t);
        int r0 = p.rci * l->rows, r1 = r0 + l->rows < H ? r0 + l->rows : H, c0, c1, k = sg->tile_core[t] / cpc;
        if (l->groups == 1 && l->kind == BK_K_CONV) { c0 = p.gci * l->gchunk; c1 = c0 + l->gchunk < OC ? c0 + l->gchunk : OC; }
        else {
            int opg = OC / l->groups, g0 = p.gci * l->gchunk;
            c0 = g0 * opg;
            c1 = (g0 + l->gchunk < l->groups ? g0 + l->gchunk : l->groups) * opg;
        }
        for (int ch = c0; ch < c1; ch++)
            for (int r = r0; r < r1; r++) {
                int8_t *o = &own[(size_t)ch * H + r];
                *o = *o == -1 || *o == k ? (int8_t)k : -2;
            }
    }
    for (int ch = 0; ch < OC; ch++)
        for (int r = 0; r < H; r++) {
            int8_t *o = &own[(size_t)ch * H + r];
            int lo = ly->band_rows && *o >= 0 ? bk_band_window(H, K, *o, ly->band_rows) : 0;
            int hi = ly->band_rows && *o >= 0 ? lo + ly->band_rows : H;
            if (*o < 0 || r < lo || r >= hi) { *o = -2; mask[r] |= 1u << 31; }
            else mask[r] |= 1u << *o;
        }
    for (int r = 0; r < H && !ly->band_chans; r++)
        if (mask[r] & (mask[r] - 1)) {
            for (int ch = 0; ch < OC; ch++) own[(size_t)ch * H + r] = -2;
            mask[r] = 1u << 31;
        }
}

TEST(band_cells_follow_the_rule_cell_by_cell)
{
    srand(27);
    for (int iter = 0; iter < 300; iter++) {
        AtlErr e;
        BkLayer ly;
        memset(&ly, 0, sizeof ly);
        ly.node = -1;
        BkLow *l = &ly.lw;
        l->kind = rand() % 4 ? BK_K_CONV : BK_K_POOL;
        l->N = 1;
        l->OH = 1 + rand() % 20;
        l->rows = 1 + rand() % l->OH;
        l->nrc = (l->OH + l->rows - 1) / l->rows;
        l->nwc = 1 + rand() % 2;
        l->nkc = 1 + rand() % 2;
        if (rand() % 2) {   /* one group: chunks of output channels (a pool's: of groups, one) */
            l->groups = 1;
            l->OC = 1 + rand() % 40;
            l->gchunk = 1 + rand() % l->OC;
            l->ngc = (l->OC + l->gchunk - 1) / l->gchunk;
        } else {            /* grouped: chunks of groups */
            l->groups = 1 + rand() % 8;
            l->OC = l->groups * (1 + rand() % 3);
            l->gchunk = 1 + rand() % l->groups;
            l->ngc = (l->groups + l->gchunk - 1) / l->gchunk;
        }
        int run = rand() % 2 ? l->nkc : 1, ntiles = l->nkc * l->nwc * l->nrc * l->ngc;
        ly.band_cores = 16;
        ly.band_clusters = 4;
        ly.band_chans = rand() % 2;
        ly.band_rows = rand() % 2 ? 0 : 1 + rand() % l->OH;
        ly.bands = BK_BANDS_SPREAD;
        REQUIRE(bk_set_tiles(&ly, ntiles, run, &e) == 0);
        BkSegment sg;
        memset(&sg, 0, sizeof sg);
        sg.layer = &ly;
        sg.cores = (BkCoreSet){0, 16};
        REQUIRE((sg.tile_core = malloc((size_t)ntiles * sizeof *sg.tile_core)) != NULL);
        int spread = rand() % 4;   /* 0: every run on a random core, else a few clusters */
        for (int t = 0; t < ntiles; t += run)
            for (int j = 0; j < run; j++) sg.tile_core[t + j] = spread ? (t / run * 4 / (ntiles / run)) * 4 + rand() % 4 : rand() % 16;
        REQUIRE(bk_band_distribute(&sg, &e) == 0);
        int8_t *own = malloc((size_t)l->OC * l->OH);
        uint32_t *mask = malloc((size_t)l->OH * sizeof *mask);
        REQUIRE(own && mask);
        band_cells_reference(&sg, own, mask);
        CHECK_EQ_INT(sg.nch, l->OC);
        CHECK_EQ_INT(sg.nrows, l->OH);
        CHECK(!memcmp(own, sg.cell_owner, (size_t)l->OC * l->OH));
        CHECK(!memcmp(mask, sg.row_mask, (size_t)l->OH * sizeof *mask));
        for (int ch = 0; ch < l->OC; ch++) {   /* runs of equal channels */
            int end = ch + 1;
            while (end < l->OC && !memcmp(own + (size_t)ch * l->OH, own + (size_t)end * l->OH, (size_t)l->OH)) end++;
            CHECK_EQ_INT(sg.chan_run[ch], end);
        }
        free(own);
        free(mask);
        bk_segment_free(&sg);
        bk_layer_free(&ly);
    }
}

int main(void)
{
    RUN(tiles_go_to_cores_in_balanced_blocks);
    RUN(table_is_the_three_stage_pipeline);
    RUN(multicast_and_copies);
    RUN(emitter_writes_the_table_order);
    RUN(window_halos_clip_at_the_borders);
    RUN(elementwise_broadcasts_and_others_read_all);
    RUN(concat_and_resize_need_their_part);
    RUN(band_weight_rereads_count_copies_per_cluster);
    RUN(band_cells_follow_the_rule_cell_by_cell);
    return test_summary("test_schedule");
}

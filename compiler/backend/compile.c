/* compile.c - the backend driver: graph -> lowered layers -> schedule ->
 * cost -> streams -> .abm records.
 *
 * Reads: a canonicalised graph (compiler/passes/passes.h), the chip,
 *   options.
 * Does, in order:
 *   1. legalize: on a private copy when the graph needs it, ConvTranspose
 *      into Reshape/Pad/Conv, RNN/GRU/LSTM unrolled, ops run as other ops
 *      (legalize/rewrite_*.c), then re-inference; pattern absorption
 *      (legalize/pattern.c);
 *   2. alloc: DRAM placement (alloc/place.c);
 *   3. lower: one layer per remaining node in graph order (lower/: the op
 *      table picks the lowering), then the tile-shape search on the
 *      layer's core set (group/search.c); with bands, a layer's band way
 *      judged with its consumer's price (look_resolve); graph outputs that
 *      folding made constants become a copy each;
 *   4. schedule: the v1 schedule, one segment per layer on all cores of
 *      the chip, each closed by barrier 0 of all engines;
 *   5. cost: every segment priced (cost/cost.c) for the summary;
 *   6. emit: every segment's tables into streams (emit/emit.c), then the
 *      writer's records (emit/abm.c): a batch variant (batch = dim 0 of
 *      the first input), io and activation tensors, streams, memory plan,
 *      metadata.
 *   Views (except the copies placement asks for: a graph output that is
 *   a view of a graph input), absorbed nodes and shape-only nodes emit
 *   nothing.
 * Guarantees: on success the variant runs on any chip with this chip's
 *   fingerprint; on failure the writer may hold a partial net and the
 *   message names the node and op. The summary carries the wall time of
 *   each backend phase (bk_phase_names) for `atoll compile --time`. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/backend/backend.h"
#include "compiler/backend/split.h"
#include "compiler/backend/sink.h"
#include "compiler/backend/staged.h"
#include "compiler/backend/stage.h"
#include "compiler/emit/emit.h"
#include "compiler/group/group.h"
#include "compiler/legalize/legalize.h"
#include "compiler/lower/lower.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "isa/timing.h"
#include "util/clock.h"

void bk_options_default(BkOptions *o)
{
    memset(o, 0, sizeof *o);
    o->dtype = ISA_F32;
}

void bk_summary_free(BkSummary *s)
{
    if (!s) return;
    for (int i = 0; s->layers && i < s->nlayers; i++) free(s->layers[i].members);
    free(s->layers);
    memset(s, 0, sizeof *s);
}

const char *const bk_phase_names[BK_NPHASES] = {"address assignment", "lowering+tile search", "group formation",
                                                "schedule+cost", "emit"};

/* The nodes that become layers: not dead, not absorbed, not a view that
 * shares its input's storage, not folded into a constant. */
static int is_layer(const BkCtx *c, int i)
{
    const IrGraph *g = c->g;
    const IrNode *n = &g->nodes[i];
    if (n->dead || c->skip[i]) return 0;
    if (n->nout >= 1 && n->out[0] >= 0 && g->t[n->out[0]].is_view && c->pl[n->out[0]].root != n->out[0]) return 0;
    if (n->nout >= 1 && n->out[0] >= 0 && g->t[n->out[0]].data) return 0;
    return 1;
}

/* Bands: the cells of ly's output each cluster writes on `cores`,
 * for the layers after it to price their loads with. */
static int publish_bands(BkCtx *c, BkLayer *ly, BkCoreSet cores, AtlErr *e)
{
    BkSegment sg;
    memset(&sg, 0, sizeof sg);
    sg.layer = ly;
    sg.cores = cores;
    int rc = bk_sched_distribute(&sg, e);
    if (!rc) bk_band_publish(c, &sg);
    bk_segment_free(&sg);
    return rc;
}

/* K split across clusters (lower/kbands.c): the conv layer just lowered,
 * layers[*n - 1], lowered again as its two phases, each with its shape
 * chosen on `all`; they replace it (one more layer) always, or with auto
 * when the conv took channel bands (or reads a channel shard of several
 * images, bk_kbands_ok: its clusters then read only their own shards)
 * and their prices add up to less than its (bk_price_layer). Phase 2 leaves its output in channel bands, so
 * only then do the layers after it find their input as before: a conv in
 * row bands replaced by the pair made mobilenetv2_035's next expand
 * gather its input (a re-layout no price here sees; +0.5% on a1). The
 * partials' scratch goes at the end of the activation region. */
static int try_kbands(BkCtx *c, BkLayer *layers, int *n, BkCoreSet all, AtlErr *e)
{
    BkLayer *ly = &layers[*n - 1], p1, p2;
    memset(&p1, 0, sizeof p1);
    memset(&p2, 0, sizeof p2);
    p1.node = ly->node;
    p1.tensor = ly->tensor;
    p1.layer_id = ly->layer_id;
    p1.slot_size = c->slot;
    p1.band_cores = ly->band_cores;
    p1.band_clusters = ly->band_clusters;
    p1.band_chans = ly->band_chans;
    p1.band_rows = ly->band_rows;
    uint64_t base = c->kb_base ? c->kb_base : (c->act_bytes + 63) / 64 * 64;
    const BkLow *l = &ly->lw;
    uint64_t bytes = (uint64_t)c->bands * l->N * l->OC * l->OH * l->OW * 4;
    int rc = bk_lower_kbands(c, ly, &p1, &p2, bk_addr(ABM_REGION_ACTIVATIONS, base), e);
    if (!rc) rc = bk_choose_shape(c, &p1, all, e);
    if (!rc) rc = bk_choose_shape(c, &p2, all, e);
    int keep = !rc;
    if (!rc && !c->kbands_always && ly->bands != BK_BANDS_CHANNELS && l->N == 1) keep = 0;
    else if (!rc && !c->kbands_always) {
        uint64_t whole = 0, one = 0, two = 0;
        rc = bk_price_layer(c, ly, all, &whole, e) || bk_price_layer(c, &p1, all, &one, e) ||
             bk_price_layer(c, &p2, all, &two, e) ? -1 : 0;
        keep = !rc && one + two < whole;
    }
    if (rc < 0 || !keep) {
        bk_layer_free(&p1);
        bk_layer_free(&p2);
        return rc < 0 ? -1 : 0;
    }
    bk_layer_free(ly);
    *ly = p1;
    p2.layer_id = *n;
    layers[(*n)++] = p2;
    c->kb_base = base;
    if (bytes > c->kb_bytes) c->kb_bytes = bytes;
    return 0;
}

/* A layer's fields before its lowering: node (-1: the constant graph
 * output t), id, slot, bands. */
static void layer_init(const BkCtx *c, BkLayer *ly, int node, int t, int id, BkCoreSet all)
{
    const IrGraph *g = c->g;
    memset(ly, 0, sizeof *ly);
    ly->node = node;
    ly->tensor = t;
    ly->layer_id = id;
    ly->slot_size = c->slot;
    if (c->bands) {
        ly->band_cores = all.count;
        ly->band_clusters = c->bands;
        ly->band_chans = c->band_chans;
        const IrNode *nd = node < 0 ? NULL : &g->nodes[node];
        int r = nd && nd->nout >= 1 && nd->out[0] >= 0 ? bk_tensor_root(c, nd->out[0]) : -1;
        if (r >= 0 && c->pl[r].band) ly->band_rows = c->band[r].rows;
    }
}

/* The band way over the chain (docs/backend.md): the next node after k
 * that becomes a layer when it reads k's banded output as its first input
 * (a window layer's), else -1. */
static int look_consumer(const BkCtx *c, int k)
{
    const IrGraph *g = c->g;
    const IrNode *nd = &g->nodes[k];
    if (!c->bands || !c->band_chans || nd->nout < 1 || nd->out[0] < 0) return -1;
    int r = bk_tensor_root(c, nd->out[0]);
    if (!c->pl[r].band) return -1;
    for (int j = k + 1; j < g->nn; j++) {
        if (!is_layer(c, j)) continue;
        const IrNode *q = &g->nodes[j];
        return q->nin >= 1 && q->in[0] >= 0 && !g->t[q->in[0]].data && bk_tensor_root(c, q->in[0]) == r &&
                       (!strcmp(q->op, "Conv") || !strcmp(q->op, "MaxPool") || !strcmp(q->op, "AveragePool"))
                   ? j
                   : -1;
    }
    return -1;
}

/* The tile search keeps, of each way, the cheapest shape priced within
 * LOOK_MARGIN_PCT percent of its pick, weight copies beyond one left out
 * of that price (the judge prices their bytes): ResNet-50's layer2.x
 * conv2 prices row bands 49% above channel bands with them, 7% without. */
enum { LOOK_MARGIN_PCT = 10 };
/* The judge's prices are the search's guesses (stores by the consumers'
 * reach, prefetch by the room left): another pair is taken only when it
 * prices LOOK_GAIN_PERMILLE per mille below the pick's. */
enum { LOOK_GAIN_PERMILLE = 5 };
/* A graph of fewer layers is built twice instead, its re-layouts and
 * weight copies priced higher the second time (cheaper_bands, below: at
 * most 40 layers); there the look made resnet20_cifar's normal plan 6%
 * faster (122,069 -> 114,593 cycles) by leaving its first layer groups,
 * for 1.41x -> 1.75x its compulsory DRAM bytes, past the 0.5% the
 * frugal plan may cost, so such graphs keep the plans of before. */
enum { LOOK_MIN_LAYERS = 41 };

/* The band way over the chain (docs/backend.md): layers[p] and its
 * consumer layers[q], both lowered with the cheapest shape of each way
 * kept (BkLayer.look), q searched under p's applied option. Each option
 * of p is applied and its cells published, and q priced under it with the
 * cheapest shape of each of its ways (no search again: those its search
 * found under p's option); the pair the judge prices lowest
 * (bk_look_judge), LOOK_GAIN_PERMILLE below the pair as searched, is
 * applied. */
static int look_resolve(BkCtx *c, BkLayer *layers, int p, int q, BkCoreSet all, AtlErr *e)
{
    BkLayer *P = &layers[p], *Q = &layers[q];
    int cur = P->look_cur, best_o = cur, best_v = 0;
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < P->nlook; k++) {
        /* p's applied option first (q was searched under it), then the others */
        int o = k == 0 ? cur : k == cur ? 0 : k;
        if (k && (bk_look_apply(c, P, o, e) || publish_bands(c, P, all, e))) return -1;
        BkLookPrice pp;
        if (bk_look_price(c, P, all, P->look_pf_layer, P->look_pf_room, &pp, e)) return -1;
        for (int v = 0; v < (Q->nlook ? Q->nlook : 1); v++) {
            if (v && Q->look[v].rank) continue;   /* the consumer: its cheapest of each way */
            if ((k || v) && Q->nlook && bk_look_apply(c, Q, v, e)) return -1;
            BkLookPrice qp;
            if (bk_look_price(c, Q, all, P->layer_id, P->look[o].room, &qp, e)) return -1;
            uint64_t j = bk_look_judge(c, P, &pp, &qp);
            /* an other pair must gain LOOK_GAIN_PERMILLE of the pick's */
            if (!k && !v) best = j - j / 1000 * LOOK_GAIN_PERMILLE;
            else if (j < best) { best = j; best_o = o; best_v = v; }
        }
    }
    if (bk_look_apply(c, P, best_o, e) || publish_bands(c, P, all, e)) return -1;
    if (Q->nlook) {
        if (bk_look_apply(c, Q, best_v, e)) return -1;
        c->pf_room = Q->look[best_v].room;
    }
    return publish_bands(c, Q, all, e);
}

/* Lowers every layer into layers (count *n), each with its tile shape
 * chosen on all cores of the chip (placement split: of one cluster). */
static int lower_all(BkCtx *c, BkLayer *layers, int *n, double *phase, AtlErr *e)
{
    const IrGraph *g = c->g;
    BkCoreSet all = {0, c->split ? c->chip->cores_per_cluster : cfg_total_cores(c->chip)};
    c->ncores = all.count;
    c->band_look_margin = LOOK_MARGIN_PCT;
    int prod = -1, want = -1, nl = 0;   /* the layer whose consumer (node want) judges its way */
    for (int k = 0; k < g->nn; k++) nl += is_layer(c, k);   /* the layer whose consumer (node want) judges its way */
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? g->nout : g->nn;
        for (int k = 0; k < cnt; k++) {
            int t = pass ? g->outputs[k] : -1;
            if (pass ? !g->t[t].data : !is_layer(c, k)) continue;
            BkLayer *ly = &layers[*n];
            layer_init(c, ly, pass ? -1 : k, t, *n, all);
            (*n)++;
            double t0 = atl_clock_s();
            int off = c->band_look_mode == BK_LOOK_NEVER || (c->band_look_mode == BK_LOOK_AUTO && nl < LOOK_MIN_LAYERS);
            int next = pass || c->split || off ? -1 : look_consumer(c, k), at = *n - 1;
            c->band_look = next >= 0 || (prod >= 0 && want == k);
            ly->look_pf_layer = c->pf_layer;
            ly->look_pf_room = c->pf_room;
            int rc = pass ? bk_lower_const_output(c, t, ly, e) : bk_lower_node(c, k, ly, e);
            if (!rc) rc = bk_choose_shape(c, ly, all, e);
            c->band_look = 0;
            if (!rc && !pass && bk_kbands_ok(c, ly)) rc = try_kbands(c, layers, n, all, e);
            if (!rc && c->bands) rc = publish_bands(c, &layers[*n - 1], all, e);
            if (!rc && prod >= 0 && want == k && *n == at + 1) rc = look_resolve(c, layers, prod, at, all, e);
            prod = -1;
            if (next >= 0 && *n == at + 1) {
                if (layers[at].nlook > 1) { prod = at; want = next; }
            }
            phase[BK_PHASE_LOWER] += atl_clock_s() - t0;
            if (rc) return pass ? atl_err_prefix(e, "graph output '%s'", g->t[t].name) : -1;
        }
    }
    return 0;
}

/* The schedule: the units (layers alone, or their groups with grouping
 * on), one segment each on all cores of the chip, closed by barrier 0;
 * layer ids numbered in execution order. */
static int schedule_all(BkCtx *c, BkLayer *layers, int n, BkLayer *chains, BkSchedule *sched, int *nunits_out,
                        int layer_base, double *phase, AtlErr *e)
{
    int cpc = c->chip->cores_per_cluster;
    BkCoreSet all = {0, c->split ? cpc : cfg_total_cores(c->chip)};
    BkUnit *units = malloc((size_t)(n ? n : 1) * sizeof *units);
    if (!units) return atl_fail(e, "out of memory");
    int nunits = n, rc = -1;
    double t0 = atl_clock_s();
    if (c->grouping) {
        if (bk_form_groups(c, layers, n, all, chains, units, &nunits, e)) goto done;
    } else
        for (int i = 0; i < n; i++) units[i] = (BkUnit){&layers[i], i, 1, all};
    phase[BK_PHASE_GROUP] += atl_clock_s() - t0;
    for (int i = 0; i < nunits; i++) {
        units[i].ly->layer_id = layer_base + i;
        bk_chain_mark_internal(c, units[i].ly);
    }
    *nunits_out = nunits;
    if (!c->split) {
        for (int i = 0; i < nunits; i++)
            if (bk_sched_add(sched, units[i].ly, units[i].cores, all, 0, e) < 0) goto done;
        if (c->bands && bk_band_finalize(c, sched, e)) goto done;
        rc = 0;
        goto done;
    }
    /* placement split: cluster k runs instances k*I/K .. (k+1)*I/K-1, every
     * unit of an instance on the cluster's cores, closed by the cluster's
     * barrier; the first instance's segments come first (the summary's rows) */
    int inst = c->io_scale, K = c->clusters;
    for (int k = 0; k < K; k++)
        for (int j = k * inst / K; j < (k + 1) * inst / K; j++)
            for (int i = 0; i < nunits; i++) {
                BkCoreSet cl = {k * cpc, cpc};
                BkCoreSet set = {k * cpc + units[i].cores.first, units[i].cores.count};
                int s = bk_sched_add(sched, units[i].ly, set, cl, 0, e);
                if (s < 0) goto done;
                sched->seg[s].bar.scope = ISA_SCOPE_CLUSTER;
                sched->seg[s].inst = j;
                sched->seg[s].act_copy = k;
            }
    rc = 0;
done:
    free(units);
    return rc;
}

/* The op of node's layer as the summary names it: the op, its fused
 * activation, a fused residual Add and that one's activation
 * ("Conv+Add+Relu"). */
static void layer_op(const BkCtx *c, int node, char *out, size_t cap)
{
    const IrNode *n = &c->g->nodes[node];
    int tn = c->tail[node];
    const IrNode *t = tn >= 0 ? &c->g->nodes[tn] : NULL;
    snprintf(out, cap, "%s%s%s%s%s%s", c->gelu_src[node] >= 0 ? "Gelu" : n->op, c->act_on[node] ? "+" : "",
             c->act_on[node] ? n->act : "", t ? "+Add" : "", t && c->act_on[tn] ? "+" : "", t && c->act_on[tn] ? t->act : "");
}

/* "name\top\n" for each member node (malloc'd; NULL when out of memory). */
static char *member_list(const BkCtx *c, const int *nodes, int n)
{
    size_t cap = 1;
    for (int i = 0; i < n; i++) cap += strlen(c->g->nodes[nodes[i]].name ? c->g->nodes[nodes[i]].name : "") + 48;
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t k = 0;
    s[0] = 0;
    for (int i = 0; i < n; i++) {
        char op[40];
        layer_op(c, nodes[i], op, sizeof op);
        const char *nm = c->g->nodes[nodes[i]].name;
        k += (size_t)snprintf(s + k, cap - k, "%s\t%s\n", nm ? nm : "", op);
    }
    return s;
}

/* BkLayerInfo.mat_cycles of ly (node: its first member): an int8 layer
 * (its first input an integer) at the i8 rate, the others at their
 * storage dtype's. */
static uint64_t layer_mat_cycles(const BkCtx *c, const BkLayer *ly, int node)
{
    if (!ly->macs || node < 0 || c->g->nodes[node].nin < 1 || c->g->nodes[node].in[0] < 0) return 0;
    int dt = bk_tensor_dt(c, c->g->nodes[node].in[0]);
    int rate = tim_mm_rate(c->chip, dt == ISA_I16 ? ISA_I8 : dt);
    if (!rate) rate = tim_mm_rate(c->chip, c->dt);
    return ly->macs * (uint64_t)rate / ((uint64_t)c->chip->mm_rows * (uint64_t)c->chip->mm_cols);
}

static int fill_summary(const BkCtx *c, const BkSchedule *sched, int rows, const BkEmit *x, int batch, BkSummary *sum, AtlErr *e)
{
    const IrGraph *g = c->g;
    sum->nlayers = rows;
    for (int i = 0; i < rows; i++) {
        const BkSegment *sg = &sched->seg[i];
        const BkLayer *ly = sg->layer;
        BkLayerInfo *li = &sum->layers[i];
        int members[BK_CHAIN_MAX];
        int nm = bk_chain_nodes(ly, members, BK_CHAIN_MAX);
        if (nm) {
            const IrNode *a = &g->nodes[members[0]], *b = &g->nodes[members[nm - 1]];
            snprintf(li->name, sizeof li->name, "%s .. %s", a->name ? a->name : "", b->name ? b->name : "");
            snprintf(li->op, sizeof li->op, "Group(%d)", nm);
        } else if (ly->node < 0) {
            snprintf(li->name, sizeof li->name, "%s", g->t[ly->tensor].name);
            snprintf(li->op, sizeof li->op, "Constant");
        } else {
            const IrNode *n = &g->nodes[ly->node];
            snprintf(li->name, sizeof li->name, "%s", n->name ? n->name : "");
            layer_op(c, ly->node, li->op, sizeof li->op);
            members[0] = ly->node;
            nm = 1;
        }
        li->nmembers = nm ? nm : 1;
        if (nm && !(li->members = member_list(c, members, nm))) return atl_fail(e, "out of memory");
        li->layer_id = ly->layer_id;
        li->tiles = ly->ntiles;
        li->cores = sg->cores_used;
        li->core_first = sg->cores.first;
        li->core_count = sg->cores.count;
        /* bands: how the tiles went to the clusters, the gather's pieces */
        int pieces = bk_stage_pieces(c, sg);
        char gp[16] = "";
        if (pieces > 1) snprintf(gp, sizeof gp, " g%d", pieces);
        /* " pf": the layer before staged its first weight keys (prefetch) */
        snprintf(li->split, sizeof li->split, "%s%s%s%s", ly->split,
                 ly->bands == BK_BANDS_CHANNELS ? " chans" : ly->bands == BK_BANDS_ROWS ? " rows" : "", gp, sg->pf_in ? " pf" : "");
        li->macs = ly->macs;
        /* a depthwise conv on the vector unit (lower/dwvec.c) runs no MACs on the matrix unit */
        li->run_macs = !ly->chain && ly->lw.vdw ? 0 : ly->run_macs ? ly->run_macs - bk_chain_vec_macs(ly) : ly->macs;
        li->mat_cycles = layer_mat_cycles(c, ly, nm ? members[0] : -1);
        li->est_cycles = sg->est_cycles;
        li->est_compute = sg->est_compute;
        li->est_dma = sg->est_dma;
        li->est_rd = sg->est_rd;
        li->est_wr = sg->est_wr;
        li->dram_rd = sg->dram_rd;
        li->dram_wr = sg->dram_wr;
        li->lmem_peak = sg->lmem_peak;
        li->is_matrix = ly->is_matrix;
        sum->est_cycles += sg->est_cycles;
    }
    if (c->split) {
        /* the busiest cluster runs ceil(I/K) instances one after another */
        int per = (c->io_scale + c->clusters - 1) / c->clusters;
        sum->est_cycles *= (uint64_t)per;
        sum->split = 1;
        sum->instances = c->io_scale;
        sum->micro_batch = batch / c->io_scale;
        sum->clusters = c->clusters;
        sum->act_sram = c->act_sram;
    }
    if (c->sram_copies || c->bands) {
        sum->sram_bands = c->bands;
        sum->act_sram = c->act_sram;
        sum->sram_copies = c->sram_copies;
    }
    for (int t = 0; t < g->nt; t++) {
        const BkPlace *p = &c->pl[t];
        sum->act_dram_tensors += p->root == t && p->placed && p->region == ABM_REGION_ACTIVATIONS && !p->internal && !p->in_sram && !p->band;
    }
    sum->weight_bytes = c->weight_bytes;
    sum->act_peak = c->act_bytes;
    sum->act_sum = c->act_sum;
    sum->io_bytes = c->io_bytes;
    sum->batch = batch;
    sum->cores = x->prog.ncores;
    for (int k = 0; k < x->prog.ncores * ISA_NUM_ENGINES; k++) sum->insns += (uint64_t)x->prog.streams[k].count;
    return 0;
}

/* Batch B in instances of m images, on as many clusters as there are
 * instances, at most the chip's. */
static BkSplit split_of(int B, int m, const AtlChip *chip)
{
    int I = B / m;
    return (BkSplit){B, I, chip->clusters < I ? chip->clusters : I, NULL, 0};
}

static void stage_free(BkStage *st)
{
    bk_sched_free(&st->sched);
    for (int i = 0; st->layers && i < st->nlayers; i++) bk_layer_free(&st->layers[i]);
    for (int i = 0; st->chains && i < st->nlayers; i++) bk_layer_free(&st->chains[i]);
    free(st->layers);
    free(st->chains);
    if (st->c.band)
        for (int t = 0; t < st->c.g->nt; t++) {
            free(st->c.band[t].owner); free(st->c.band[t].need); free(st->c.band[t].run); free(st->c.band[t].pend);
        }
    free(st->c.band);
    if (!st->flow_borrowed) bk_flow_free(st->c.flow);
    free(st->c.pl); free(st->c.skip); free(st->c.gelu_src); free(st->c.act_on); free(st->c.tail);
    memset(st, 0, sizeof *st);
}

/* Row bands: quarters of the SRAM the banded tensors may take, the rest
 * for input staging above them (ResNet-50 fp32 on a1: 2 and 3 price the
 * same, 4 (no staging) 9% more). */
#define BAND_SRAM_SHARE 3

static int check_options(const AtlChip *chip, const BkOptions *opt, AtlErr *e)
{
    if (opt->group != BK_GROUP_AUTO && opt->group != BK_GROUP_NONE)
        return atl_fail(e, "backend: group mode %d is not one of auto, none", opt->group);
    if (opt->group_weights < BK_GW_AUTO || opt->group_weights > BK_GW_STREAM)
        return atl_fail(e, "backend: group weight mode %d is not one of auto, resident, stream", opt->group_weights);
    if (opt->group_cslice < BK_CS_AUTO || opt->group_cslice > BK_CS_ONLY)
        return atl_fail(e, "backend: C slice mode %d is not one of auto, never, only", opt->group_cslice);
    if (opt->stage_copy < BK_SRAM_AUTO || opt->stage_copy > BK_SRAM_ALWAYS)
        return atl_fail(e, "backend: stage copy mode %d is not one of auto, never, always", opt->stage_copy);
    if (opt->sram_input < BK_SRAM_AUTO || opt->sram_input > BK_SRAM_ALWAYS)
        return atl_fail(e, "backend: SRAM input mode %d is not one of auto, never, always", opt->sram_input);
    if (opt->sram_weights < BK_SRAM_AUTO || opt->sram_weights > BK_SRAM_ALWAYS)
        return atl_fail(e, "backend: SRAM weights mode %d is not one of auto, never, always", opt->sram_weights);
    if (opt->prefetch != BK_PREFETCH_AUTO && opt->prefetch != BK_PREFETCH_NEVER && opt->prefetch != BK_PREFETCH_SPREAD)
        return atl_fail(e, "backend: prefetch mode %d is not one of auto, never, spread", opt->prefetch);
    if (opt->band_look < BK_LOOK_AUTO || opt->band_look > BK_LOOK_ALWAYS)
        return atl_fail(e, "backend: band look mode %d is not one of auto, never, always", opt->band_look);
    if (opt->kbands < BK_KBANDS_AUTO || opt->kbands > BK_KBANDS_ALWAYS)
        return atl_fail(e, "backend: K split mode %d is not one of never, auto, always", opt->kbands);
    if (opt->sram_acts < BK_SRAM_ACTS_AUTO || opt->sram_acts > BK_SRAM_ACTS_ROWS)
        return atl_fail(e, "backend: SRAM activation mode %d is not one of auto, never, bands, rows", opt->sram_acts);
    if (opt->dtype != ISA_F32 && opt->dtype != ISA_F16 && opt->dtype != ISA_BF16)
        return atl_fail(e, "backend: dtype %s is not supported (f32, f16, bf16)", isa_dtype_name(opt->dtype));
    if (opt->sram_pair < BK_PAIR_AUTO || opt->sram_pair > BK_PAIR_NEVER)
        return atl_fail(e, "backend: SRAM pair mode %d is not one of auto, always, never", opt->sram_pair);
    /* the pair's input semaphore (BK_SEM_INPUT) only when it is asked for */
    int sems = opt->sram_pair == BK_PAIR_ALWAYS ? BK_SEMS_USED : BK_SEM_INPUT;
    if (chip->semaphores < sems)
        return atl_fail(e, "backend: the chip has %d semaphores per core; the pipeline needs %d%s", chip->semaphores, sems,
                        opt->sram_pair == BK_PAIR_ALWAYS ? " with --sram-pair" : "");
    return 0;
}

/* With placement chip, how many cluster SRAMs can hold the activations
 * so that every core reads them from its own cluster's: one on a chip of
 * one cluster; every cluster's on a chip whose clusters are linked (each
 * SRAM write is copied to the others over the links); 0 when the
 * clusters can reach each other's SRAM only through DRAM. */
static int sram_copies(const AtlChip *chip)
{
    return chip->clusters == 1 ? 1 : chip->noc_cluster_links ? chip->clusters : 0;
}

/* Whether convolutions may stage their input and weights both in SRAM:
 * asked for, or auto on a chip with the semaphore the pair's staged input
 * signals (BK_SEM_INPUT; a chip with fewer keeps it off). */
static int pair_on(const AtlChip *chip, const BkOptions *opt)
{
    return opt->sram_pair == BK_PAIR_ALWAYS || (opt->sram_pair == BK_PAIR_AUTO && chip->semaphores >= BK_SEMS_USED);
}

/* Builds st from g: context, placement (io where io_fixed says, if not
 * NULL), lowering, schedule (layer ids from layer_base) and the cost of
 * every segment (with split, of the first instance's). The cost model's
 * DMA pricer is `flow` (borrowed: another stage for the same chip owns
 * it), or with NULL st's own. */
static int stage_build_flow(BkStage *st, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp,
                            AbmWriter *w, const uint64_t *io_fixed, uint64_t io_fixed_bytes, int layer_base,
                            BkFlowPlanner *flow, AtlErr *e)
{
    memset(st, 0, sizeof *st);
    BkCtx *c = &st->c;
    c->g = g;
    c->chip = chip;
    if (sp) {
        c->split = 1;
        c->io_scale = sp->instances;
        c->clusters = sp->clusters;
        /* the clusters run at once: each gets its share of DRAM bandwidth */
        st->shared = *chip;
        st->shared.dram_gbps = chip->dram_gbps / sp->clusters;
        c->chip = &st->shared;
    }
    c->io_fixed = io_fixed;
    c->io_fixed_bytes = io_fixed_bytes;
    c->w = w;
    c->dt = opt->dtype;
    c->es = isa_dtype_size(c->dt);
    c->ncores = cfg_total_cores(chip);
    c->keep_activations = opt->keep_activations;
    /* keeping every activation for comparison keeps every layer on its own */
    c->grouping = opt->group != BK_GROUP_NONE && !opt->keep_activations;
    c->group_max = opt->group_max;
    c->weights_resident = opt->group_weights == BK_GW_RESIDENT;
    c->weights_stream = opt->group_weights == BK_GW_STREAM;
    c->cslice_never = opt->group_cslice == BK_CS_NEVER;
    c->cslice_only = opt->group_cslice == BK_CS_ONLY;
    c->sram_never = opt->sram_input == BK_SRAM_NEVER;
    c->sram_always = opt->sram_input == BK_SRAM_ALWAYS;
    c->wsram_never = opt->sram_weights == BK_SRAM_NEVER;
    c->wsram_always = opt->sram_weights == BK_SRAM_ALWAYS;
    c->sram_pair = pair_on(chip, opt);
    c->prefetch_never = opt->prefetch == BK_PREFETCH_NEVER;
    c->prefetch_spread = opt->prefetch == BK_PREFETCH_SPREAD;
    c->band_near = opt->band_near;
    c->no_shards = opt->no_shards;
    c->no_chain_pack = opt->no_chain_pack;
    c->kbands_never = opt->kbands == BK_KBANDS_NEVER;
    c->kbands_always = opt->kbands == BK_KBANDS_ALWAYS;
    c->dw_matrix = opt->dw_matrix != 0;
    c->halo_never = opt->no_halo_stage != 0;
    c->band_look_mode = opt->band_look;
    c->pf_layer = -1;   /* no layer priced yet (group/search.c) */
    c->band_wprice = opt->band_price[0] > 0 ? (uint64_t)opt->band_price[0] : 1;
    c->band_rprice = opt->band_price[1] > 0 ? (uint64_t)opt->band_price[1] : 1;
    c->tile_images = opt->tile_images;
    if (sp) {
        /* activations take the cluster's SRAM, where the input staging would go */
        c->sram_never = c->wsram_never = 1;
        c->sram_always = c->wsram_always = 0;
        c->sram_cap = sp->sram_cap ? sp->sram_cap : (uint64_t)chip->sram_bytes;
        c->io_sram = sp->io_sram;   /* placement pipeline: stage boundaries in SRAM */
    } else if (opt->sram_acts == BK_SRAM_ACTS_AUTO && c->grouping && sram_copies(chip)) {
        /* placement chip: activations in every cluster's SRAM (the copies
         * the stores reach), where input staging would go */
        c->sram_never = c->wsram_never = 1;
        c->sram_always = c->wsram_always = 0;
        c->sram_cap = (uint64_t)chip->sram_bytes;
        c->sram_copies = sram_copies(chip);
    } else if ((opt->sram_acts == BK_SRAM_ACTS_BANDS || opt->sram_acts == BK_SRAM_ACTS_ROWS) && c->grouping &&
               chip->clusters > 1) {
        /* placement chip: bands in the bottom of every cluster's SRAM,
         * input staging above them */
        c->sram_cap = (uint64_t)chip->sram_bytes * BAND_SRAM_SHARE / 4;
        c->bands = chip->clusters;
        c->band_chans = opt->sram_acts == BK_SRAM_ACTS_BANDS;
    }
    if (!flow && opt->pricers) flow = bk_flow_pool_get(opt->pricers, c->chip);   /* the compile's (NULL: pool full) */
    st->flow_borrowed = flow != NULL;
    if (!(c->flow = flow ? flow : bk_flow_new(c->chip, e))) return -1;
    uint64_t row = (uint64_t)chip->lmem_banks * chip->lmem_bank_width;
    c->slot = (uint64_t)chip->lmem_bytes / 2 / row * row;
    if (c->slot == 0) c->slot = (uint64_t)chip->lmem_bytes / 2;
    c->align = (uint64_t)(chip->lmem_alignment > chip->lmem_bank_width ? chip->lmem_alignment : chip->lmem_bank_width);
    bk_sched_init(&st->sched);
    c->pl = calloc((size_t)g->nt + 1, sizeof *c->pl);
    c->skip = calloc((size_t)g->nn + 1, sizeof *c->skip);
    c->gelu_src = malloc(((size_t)g->nn + 1) * sizeof *c->gelu_src);
    c->act_on = calloc((size_t)g->nn + 1, sizeof *c->act_on);
    c->tail = malloc(((size_t)g->nn + 1) * sizeof *c->tail);
    /* a conv split by K across clusters is two layers (try_kbands) */
    st->layers = calloc(2 * (size_t)g->nn + (size_t)g->nout + 1, sizeof *st->layers);
    st->chains = calloc(2 * (size_t)g->nn + (size_t)g->nout + 1, sizeof *st->chains);
    if (c->bands && !(c->band = calloc((size_t)g->nt + 1, sizeof *c->band))) return atl_fail(e, "out of memory");
    if (!c->pl || !c->skip || !c->gelu_src || !c->act_on || !c->tail || !st->layers || !st->chains)
        return atl_fail(e, "out of memory");
    for (int t = 0; t < g->nt; t++) c->pl[t].root = t;
    for (int i = 0; i < g->nn; i++) c->gelu_src[i] = c->tail[i] = -1;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? g->nout : g->nin); i++) {
            const IrTensor *x = &g->t[pass ? g->outputs[i] : g->inputs[i]];
            if (bk_tensor_dt(c, pass ? g->outputs[i] : g->inputs[i]) < 0)
                return atl_fail(e, "graph %s '%s' has dtype %s, which the chip cannot hold (it has no 64-bit integers; "
                                "see docs/backend.md, Data types)", pass ? "output" : "input", x->name, ir_dtype_name(x->dtype));
            if (!pass && !ir_shape_known(x)) return atl_fail(e, "graph input '%s' has an unknown shape (use --input-shape)", x->name);
        }
    double t0 = atl_clock_s();
    if (bk_match_patterns(c, e) || bk_place(c, e) || bk_check_limits(c, e)) return -1;
    if (c->bands) c->sram_stage = (c->act_sram + 63) / 64 * 64;
    st->phase[BK_PHASE_ADDRESS] += atl_clock_s() - t0;
    if (lower_all(c, st->layers, &st->nlayers, st->phase, e)) return -1;
    /* the K splits' partials after the activations */
    if (c->kb_bytes) c->act_bytes = c->kb_base + (c->kb_bytes + 63) / 64 * 64;
    if (schedule_all(c, st->layers, st->nlayers, st->chains, &st->sched, &st->nunits, layer_base, st->phase, e))
        return -1;
    t0 = atl_clock_s();
    /* placement split: every instance costs what the first does */
    for (int i = 0; i < (c->split ? st->nunits : st->sched.n); i++)
        if (bk_cost_segment(c, &st->sched.seg[i], UINT64_MAX, e) < 0) return -1;
    /* the weight prefetch across barriers, where it prices lower */
    if (!c->split && c->grouping && !c->prefetch_never && bk_cost_prefetch(c, &st->sched, e)) return -1;
    st->phase[BK_PHASE_COST] += atl_clock_s() - t0;
    return 0;
}

static int stage_build(BkStage *st, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp,
                       AbmWriter *w, const uint64_t *io_fixed, uint64_t io_fixed_bytes, int layer_base, AtlErr *e)
{
    return stage_build_flow(st, g, chip, opt, sp, w, io_fixed, io_fixed_bytes, layer_base, NULL, e);
}

/* Each unit's first node (in the graph's node order) and its cycles per
 * instance, into uc (malloc'd arrays; the caller frees them). */
static int stage_unit_costs(const BkStage *st, BkStageCosts *uc, AtlErr *e)
{
    uc->n = st->nunits;
    uc->first = malloc((size_t)(st->nunits ? st->nunits : 1) * sizeof *uc->first);
    uc->est = malloc((size_t)(st->nunits ? st->nunits : 1) * sizeof *uc->est);
    if (!uc->first || !uc->est) return atl_fail(e, "out of memory");
    for (int i = 0; i < st->nunits; i++) {
        const BkLayer *ly = st->sched.seg[i].layer;
        int members[BK_CHAIN_MAX];
        int nm = bk_chain_nodes(ly, members, BK_CHAIN_MAX), first = nm ? members[0] : ly->node;
        for (int k = 1; k < nm; k++)
            if (members[k] < first) first = members[k];
        uc->first[i] = first < 0 ? st->c.g->nn : first;
        /* without prefetch: a stage's first unit is not fetched by the unit
         * before, nor its last fetching the next stage's */
        uc->est[i] = st->sched.seg[i].est_alone ? st->sched.seg[i].est_alone : st->sched.seg[i].est_cycles;
    }
    return 0;
}

/* The cost model's cycles of a built stage: the sum of its segments; with
 * split, the first instance's times the instances the busiest cluster runs. */
static uint64_t stage_cycles(const BkStage *st)
{
    uint64_t sum = 0;
    for (int i = 0; i < (st->c.split ? st->nunits : st->sched.n); i++) sum += st->sched.seg[i].est_cycles;
    if (st->c.split) sum *= (uint64_t)((st->c.io_scale + st->c.clusters - 1) / st->c.clusters);
    return sum;
}

/* Emits every segment of st; with split, the first instance's segments
 * keep what they moved and touched (the summary's figures). */
static int stage_emit(BkStage *st, BkEmit *x, AtlErr *e)
{
    if (bk_emit_use_ctx(x, &st->c, e)) return -1;
    int per = st->c.split && st->c.clusters ? st->c.io_scale / st->c.clusters : 0;   /* instances a cluster runs */
    for (int i = 0; i < st->sched.n; i++) {
        BkSegment *sg = &st->sched.seg[i];
        /* boundaries in SRAM: this instance's images, after those its cluster ran before */
        x->nsmove = st->nsram;
        for (int k = 0; k < st->nsram; k++) {
            uint64_t before = (uint64_t)(sg->inst - sg->act_copy * per);
            x->smove[k] = (BkEmitSramMove){st->sram_at[k], st->sram_at[k] + st->sram_inst[k], before * st->sram_inst[k], -1};
        }
        int rc = bk_emit_segment(x, sg, e);
        x->nsmove = 0;
        if (rc) {
            if (sg->layer->node < 0) atl_err_prefix(e, "graph output '%s'", st->c.g->t[sg->layer->tensor].name);
            return -1;
        }
        if (i >= st->nunits && st->c.split) continue;
        sg->dram_rd = x->use.dram_rd;
        sg->dram_wr = x->use.dram_wr;
        sg->lmem_peak = x->use.lmem_peak;
    }
    return 0;
}

/* With placement chip, whether --sram-activations auto tries row bands
 * beside the DRAM plan: layer groups on, a chip of several clusters that
 * reach each other's SRAM only through DRAM, and an image tensor (4-D, a
 * row per cluster) that placement could band: of one image, or, with
 * `several` (a staged schedule's chip stage, chip_stage_bands), of the
 * batch of the graph's first input, banded per image ("Bands of several
 * images" in docs/backend.md). A whole graph at batch > 1 on the chip is
 * not built with bands by auto: the bands build of a batch prices many
 * more tile shapes (resnet20_cifar at batch 8 on a1: 1.1 -> 3.9 CPU-s for
 * 3.5% fewer estimated cycles), and the tests compare placement chip at
 * batch 4 and 8 with the others often; --sram-activations bands builds it. */
static int try_bands(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, int several)
{
    if (sp || opt->sram_acts != BK_SRAM_ACTS_AUTO || opt->group == BK_GROUP_NONE || opt->keep_activations ||
        chip->clusters < 2 || sram_copies(chip))
        return 0;
    int64_t batch = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? g->t[g->inputs[0]].dims[0] : 1;
    for (int t = 0; t < g->nt; t++)
        if (!g->t[t].data && g->t[t].ndim == 4 && (g->t[t].dims[0] == 1 || (several && g->t[t].dims[0] == batch)) &&
            g->t[t].dims[2] >= chip->clusters)
            return 1;
    return 0;
}

/* Bands: the tile search chooses layer by layer, each layer's price
 * carrying the DRAM time of the bytes it makes move again (weight copies
 * beyond one on the chip, re-layouts: group/search.c), so a layer that
 * keeps a few cycles by reading its weights in two clusters cannot see
 * what its plan costs the layers after it. A plan of at most
 * BAND_PRICE_LAYERS layers is built a second time with those bytes priced
 * higher (weight copies at BAND_PRICE_W, re-layout bytes at BAND_PRICE_R
 * times their DRAM time), and the cost model's estimate of the whole plan
 * decides (resnet20_cifar on a1: 129,262 -> 128,555 cycles, its DRAM
 * bytes 1.60x -> 1.41x the compulsory). Larger graphs are not built twice
 * for it (the second build costs as much as the first: mobilenetv2_035,
 * 56 layers, 6 -> 10 CPU-s, and its higher-priced plan is slower), nor
 * graphs of several images (bands of several images: it would be a
 * third build of every placement chip compile at batch > 1, which the
 * tests comparing placements make often). */
enum { BAND_PRICE_W = 32, BAND_PRICE_R = 4, BAND_PRICE_LAYERS = 40 };

/* The cost model's DRAM bytes of a built stage (every segment's est_rd +
 * est_wr; with split, the first instance's). */
static uint64_t stage_bytes(const BkStage *st)
{
    uint64_t sum = 0;
    for (int i = 0; i < (st->c.split ? st->nunits : st->sched.n); i++) sum += st->sched.seg[i].est_rd + st->sched.seg[i].est_wr;
    return sum;
}

/* Of two plans of the same graph: the faster among those whose estimated
 * DRAM bytes are within opt->bytes_slack percent of the fewer or at most
 * BYTES_COMPULSORY percent of the compulsory bytes (the weights and the
 * graph's inputs and outputs once; issue 11's budget for small models);
 * ties: b, the frugal one. A DRAM byte costs energy (20 pJ/bit in
 * configs/a1.ini) and bandwidth other traffic could use, so a plan that
 * is a little faster by moving many more bytes than it must is not
 * taken: resnet20_cifar on a1, whose plan with the input and weights
 * both staged (--sram-pair) is estimated 8% faster (112,789 cycles) for
 * 1.87x its compulsory bytes against 1.41x (122,069). Below the budget
 * the faster plan is kept (resnet20_cifar in bf16 on a 2-cluster a1:
 * 59,917 cycles at 1.41x against 64,081 at 1.18x). */
enum { BYTES_COMPULSORY = 150 };
static BkStage *plan_pick(BkStage *a, BkStage *b, const BkOptions *opt)
{
    uint64_t ca = stage_cycles(a), cb = stage_cycles(b), ba = stage_bytes(a), bb = stage_bytes(b);
    uint64_t least = ba < bb ? ba : bb, slack = (uint64_t)(opt->bytes_slack ? opt->bytes_slack : BK_BYTES_SLACK);
    uint64_t must = b->c.weight_bytes + b->c.io_bytes;
    int a_ok = opt->bytes_slack < 0 || ba * 100 <= least * (100 + slack) || ba * 100 <= must * BYTES_COMPULSORY;
    int b_ok = opt->bytes_slack < 0 || bb * 100 <= least * (100 + slack) || bb * 100 <= must * BYTES_COMPULSORY;
    if (a_ok && (!b_ok || ca < cb)) return a;
    return b;
}

/* base: a built plan; returns it, or hi built from the same options with
 * the higher price (and, with sram_pair auto, without the pair: the
 * frugal plan) when plan_pick prefers it (a price given in the options,
 * a plan without bands, of more than BAND_PRICE_LAYERS layers or of a
 * batch of several images: base itself; hi that fails to compile is not
 * taken). hi borrows base's DMA pricer and is freed by the caller (zeroed
 * when not built). */
static BkStage *cheaper_bands(BkStage *base, BkStage *hi, const IrGraph *g, const AtlChip *chip, const BkOptions *opt,
                              AbmWriter *w)
{
    memset(hi, 0, sizeof *hi);
    if (!base->c.bands || base->c.split || opt->band_price[0] || opt->band_price[1] || base->nlayers > BAND_PRICE_LAYERS ||
        (g->nin > 0 && g->t[g->inputs[0]].ndim > 0 && g->t[g->inputs[0]].dims[0] > 1))
        return base;
    BkOptions oh = *opt;
    oh.band_price[0] = BAND_PRICE_W;
    oh.band_price[1] = BAND_PRICE_R;
    if (oh.sram_pair == BK_PAIR_AUTO) oh.sram_pair = BK_PAIR_NEVER;
    AtlErr he;
    if (stage_build_flow(hi, g, chip, &oh, NULL, w, NULL, 0, 0, base->c.flow, &he)) {
        stage_free(hi);
        return base;
    }
    BkStage *pick = plan_pick(base, hi, opt);
    for (int i = 0; i < BK_NPHASES; i++) pick->phase[i] = base->phase[i] + hi->phase[i];
    return pick;
}

/* Compiles g into w; with estimate_only, stops after the cost model and
 * gives only sum->est_cycles and, when uc is not NULL, each unit's first
 * node and cycles (w then only collects weights). With try_bands, the
 * graph is built twice, the DRAM plan first and then row bands (sharing
 * the cost model's DMA pricer; the same weights, so the writer finds them
 * all stored), and the plan the cost model prices lower is kept (equal:
 * the DRAM plan). */
static int compile_graph(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, int estimate_only,
                         AbmWriter *w, BkSummary *sum, BkStageCosts *uc, AtlErr *e)
{
    BkOptions dflt;
    if (!opt) { bk_options_default(&dflt); opt = &dflt; }
    if (sum) memset(sum, 0, sizeof *sum);
    if (check_options(chip, opt, e)) return -1;
    BkStage st, alt, sthi, althi, *use = &st;
    BkEmit emit;
    memset(&emit, 0, sizeof emit);
    memset(&alt, 0, sizeof alt);
    memset(&sthi, 0, sizeof sthi);
    memset(&althi, 0, sizeof althi);
    char sram_why[160] = "";
    int rc = -1;
    if (stage_build(&st, g, chip, opt, sp, w, NULL, 0, 0, e)) goto done;
    use = cheaper_bands(&st, &sthi, g, chip, opt, w);   /* --sram-activations bands */
    if (try_bands(g, chip, opt, sp, 0)) {
        BkOptions ob = *opt;
        ob.sram_acts = BK_SRAM_ACTS_BANDS;
        uint64_t dram = stage_cycles(&st);
        if (stage_build_flow(&alt, g, chip, &ob, sp, w, NULL, 0, 0, st.c.flow, e))
            snprintf(sram_why, sizeof sram_why, "bands do not compile: %.120s", e->msg);
        else {
            BkStage *b = cheaper_bands(&alt, &althi, g, chip, &ob, w);
            uint64_t bands = stage_cycles(b);
            if (bands < dram) use = b;
            snprintf(sram_why, sizeof sram_why, "the cost model prices bands at %llu cycles, DRAM at %llu",
                     (unsigned long long)bands, (unsigned long long)dram);
            for (int i = 0; i < BK_NPHASES; i++) use->phase[i] = st.phase[i] + b->phase[i];
        }
    }
    if (estimate_only) {
        sum->est_cycles = stage_cycles(use);
        memcpy(sum->phase_s, use->phase, sizeof use->phase);
        if (uc && stage_unit_costs(use, uc, e)) goto done;
        rc = 0;
        goto done;
    }
    double t0 = atl_clock_s();
    if (bk_emit_init(&emit, &use->c, e) || stage_emit(use, &emit, e) || bk_emit_finish(&emit, e)) goto done;
    char name[128];
    snprintf(name, sizeof name, "%s", opt->net_name ? opt->net_name : (g->name && g->name[0] ? g->name : "net"));
    int batch = sp ? sp->batch : g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? (int)g->t[g->inputs[0]].dims[0] : 1;
    uint32_t variant;
    if (bk_emit_abm(&emit, name, batch, opt->options_text, opt->source_hash, &variant, e)) goto done;
    use->phase[BK_PHASE_EMIT] += atl_clock_s() - t0;
    if (sum) {
        memcpy(sum->phase_s, use->phase, sizeof use->phase);
        sum->layers = calloc((size_t)(use->sched.n ? use->sched.n : 1), sizeof *sum->layers);
        if (!sum->layers) { atl_fail(e, "out of memory"); goto done; }
        if (fill_summary(&use->c, &use->sched, use->c.split ? use->nunits : use->sched.n, &emit, batch, sum, e)) goto done;
        snprintf(sum->sram_why, sizeof sum->sram_why, "%s", sram_why);
    }
    rc = 0;
done:
    bk_emit_free(&emit);
    stage_free(&althi);   /* these borrow st's pricer */
    stage_free(&sthi);
    stage_free(&alt);
    stage_free(&st);
    return rc;
}

/* Graphs with ops the backend rewrites (bk_rewrite_*.c) are compiled
 * from a rewritten private copy; the caller's graph stays as it was. */
static int compile_rewritten(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, int estimate_only,
                             AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    if (!bk_rewrite_count(g) && !bk_rewrite_ops_count(g)) return compile_graph(g, chip, opt, sp, estimate_only, w, sum, NULL, e);
    IrGraph copy;
    if (ir_clone(g, &copy, e)) return -1;
    /* shapes are inferred before bk_rewrite_ops: its rules read them (a
     * 3-D ConvTranspose becomes a 3-D Conv that legalize/rewrite_3d.c splits) */
    int rc = bk_rewrite_convtranspose(&copy, e) || bk_rewrite_rnn(&copy, e) || ir_toposort(&copy, e) ||
             ir_infer_shapes(&copy, e) || bk_rewrite_ops(&copy, e) || ir_toposort(&copy, e) || ir_infer_shapes(&copy, e) ||
             pass_mark_views(&copy, e) ? -1 : compile_graph(&copy, chip, opt, sp, estimate_only, w, sum, NULL, e);
    ir_free(&copy);
    return rc;
}

/* The cost model's cycles for g compiled with sp (NULL: placement chip),
 * without emitting it (weights go to a scratch writer); uc (may be NULL)
 * gets each unit's cost. */
static int estimate(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, uint64_t *cycles,
                    BkStageCosts *uc, AtlErr *e)
{
    AbmWriter *scratch = abm_writer_new(cfg_fingerprint(chip));
    if (!scratch) return atl_fail(e, "out of memory");
    abm_writer_set_level(scratch, 0);   /* never written: deflating its weights is wasted */
    BkSummary s;
    memset(&s, 0, sizeof s);   /* a rewrite may fail before compile_graph clears it */
    int rc = uc ? compile_graph(g, chip, opt, sp, 1, scratch, &s, uc, e) : compile_rewritten(g, chip, opt, sp, 1, scratch, &s, e);
    *cycles = s.est_cycles;
    bk_summary_free(&s);
    abm_writer_free(scratch);
    return rc;
}


/* The stages of a staged variant's summary into the .abm's stages section
 * (docs/abm-format.md): host information for per-stage profiles. */
static int add_stage_rows(AbmWriter *w, uint32_t variant, const BkSummary *s, AtlErr *e)
{
    for (int i = 0; i < s->nstages; i++) {
        int end = i + 1 < s->nstages ? s->stage_row[i + 1] : s->nlayers;
        AbmStage row = {variant, (uint32_t)i, (uint32_t)s->layers[s->stage_row[i]].layer_id, (uint32_t)(end - s->stage_row[i]),
                        (uint32_t)s->stage_m[i], (uint32_t)(s->batch / s->stage_m[i]), (uint32_t)s->stage_cores[i],
                        i ? s->stage_in[i] : "", s->stage_macs[i], s->stage_mat_cycles[i], s->stage_est[i],
                        (uint32_t)s->stage_dram_tensors[i]};
        if (abm_add_stage(w, variant, &row, e)) return -1;
    }
    return 0;
}

/* compile.c's steps as pipeline.c and variant.c take them (stage.h) */
static int fill_stage_summary(const BkStage *st, int rows, const BkEmit *x, int batch, BkSummary *sum, AtlErr *e)
{
    return fill_summary(&st->c, &st->sched, rows, x, batch, sum, e);
}
static const BkStageOps stage_ops = {stage_build, stage_free, fill_stage_summary, check_options, estimate};

/* A split stage after the first reads its boundary t from the io region
 * in DRAM, where every reader pays for it again (a conv whose tiles re-read
 * their input, the residual read by the block's last conv). Read through a
 * copy (bk_stage_copy_in), placement may keep the copy in the cluster's
 * SRAM: one DRAM read of t per instance. The cost model decides: *ig (the
 * stage's instance graph) becomes the copying graph when its estimate is
 * lower (BkOptions.stage_copy auto; always: regardless; never: not
 * tried). */
static int copy_boundary_in(IrGraph *ig, int t, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, AtlErr *e)
{
    if (opt->stage_copy == BK_SRAM_NEVER) return 0;
    IrGraph cg;
    if (ir_clone(ig, &cg, e)) return -1;
    uint64_t plain = 0, copied = 0;
    int rc = bk_stage_copy_in(&cg, t, e) ? -1 : 0;
    if (!rc && opt->stage_copy == BK_SRAM_AUTO) {
        rc = estimate(ig, chip, opt, sp, &plain, NULL, e);
        AtlErr ce;   /* a copy that does not compile (its dtype, ...) is not taken */
        if (!rc && estimate(&cg, chip, opt, sp, &copied, NULL, &ce)) copied = UINT64_MAX;
    }
    if (!rc && (opt->stage_copy == BK_SRAM_ALWAYS || copied < plain)) {
        IrGraph old = *ig;
        *ig = cg;
        cg = old;
    }
    ir_free(&cg);
    return rc;
}

/* A split stage's activations that placement left in DRAM (live across
 * the stage's SRAM peak) are read there by every reader, at a cluster's
 * share of the DRAM bandwidth: a convolution whose output-channel chunks
 * each re-read its input pays for it once per chunk (ResNet-50's
 * layer2.0 conv2 at one image a cluster: 4.8 MB for a 1.6 MB input). A
 * copy made just before the reader (bk_copy_before) reads it once and
 * lives only from there, where the peak is past, so placement may keep
 * it in the cluster's SRAM. Each convolution of st reading such an
 * activation as its input more than once (rereads), later ones first, is
 * priced reading it through a copy (a build of st from the copying graph)
 * and the copy kept when the cost model prices it lower, greedily; st is
 * rebuilt from the graph with the copies kept, *ig becoming it
 * (BkOptions.stage_copy auto; always: every copy; never: not tried). */
#define REREAD_MAX 16

/* 1 when node i of st is a convolution whose tiles read its input more
 * than once: several output-channel chunks, or row chunks of a window
 * whose halo rows overlap. */
static int rereads(const BkStage *st, int i)
{
    for (int j = 0; j < st->nlayers; j++) {
        const BkLow *l = &st->layers[j].lw;
        if (st->layers[j].node == i)
            return l->kind == BK_K_CONV && (l->ngc > 1 || (l->kh > l->sh && l->nrc > 1));
    }
    return 0;
}
static int copy_rereads(BkStage *st, IrGraph *ig, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, AbmWriter *w,
                        const uint64_t *io_fixed, uint64_t io_bytes, int layer_base, AtlErr *e)
{
    if (opt->stage_copy == BK_SRAM_NEVER) return 0;
    int ts[REREAD_MAX], rs[REREAD_MAX], nc = 0;
    for (int i = 0; i < ig->nn && nc < REREAD_MAX; i++) {   /* in node order */
        const IrNode *n = &ig->nodes[i];
        int t = n->nin > 0 ? n->in[0] : -1;
        if (n->dead || st->c.skip[i] || strcmp(n->op, "Conv") || t < 0 || ig->t[t].data) continue;
        const BkPlace *p = &st->c.pl[t];
        if (p->root != t || !p->placed || p->region != ABM_REGION_ACTIVATIONS || p->internal || p->in_sram || p->band) continue;
        if (!rereads(st, i)) continue;
        ts[nc] = t;
        rs[nc++] = i;
    }
    if (!nc) return 0;
    /* greedily, later readers first (a copy moves only the nodes after it) */
    IrGraph best;
    int taken = 0, rc = 0;
    uint64_t price = stage_cycles(st);
    /* the build of `best` once a copy is taken (heap: it borrows st's
     * pricer, whose chip is st->shared, and becomes st at the end instead
     * of a third build of the same graph) */
    BkStage *keep = NULL;
    if (ir_clone(ig, &best, e)) return -1;
    for (int k = nc - 1; k >= 0 && !rc; k--) {
        IrGraph cg;
        if (ir_clone(&best, &cg, e)) { rc = -1; break; }
        rc = bk_copy_before(&cg, ts[k], rs[k], e);
        uint64_t copied = UINT64_MAX;
        BkStage *alt = NULL;
        if (!rc && opt->stage_copy == BK_SRAM_AUTO) {
            AtlErr ce;   /* a copy that does not compile is not taken */
            if (!(alt = calloc(1, sizeof *alt))) rc = atl_fail(e, "out of memory");
            else if (!stage_build_flow(alt, &cg, chip, opt, sp, w, io_fixed, io_bytes, layer_base, st->c.flow, &ce))
                copied = stage_cycles(alt);
        }
        if (!rc && (opt->stage_copy == BK_SRAM_ALWAYS || copied < price)) {
            if (keep) { stage_free(keep); free(keep); }   /* built from best, still alive */
            keep = alt;
            alt = NULL;
            IrGraph old = best;
            best = cg;
            cg = old;
            if (keep) keep->c.g = &best;
            price = copied;
            taken++;
        }
        if (alt) { stage_free(alt); free(alt); }
        ir_free(&cg);
    }
    if (!rc && taken) {
        if (keep) {   /* keep is st's graph built: it takes over st's pricer (the pool's stays borrowed) */
            keep->flow_borrowed = st->flow_borrowed;
            st->flow_borrowed = 1;
        }
        stage_free(st);   /* while st->c.g is still the graph it was built on */
        IrGraph old = *ig;
        *ig = best;
        best = old;
        if (keep) {
            keep->c.g = ig;
            *st = *keep;
            if (st->c.chip == &keep->shared) st->c.chip = &st->shared;
            free(keep);
            keep = NULL;
        } else {
            rc = stage_build(st, ig, chip, opt, sp, w, io_fixed, io_bytes, layer_base, e);
        }
    }
    if (keep) { stage_free(keep); free(keep); }
    ir_free(&best);
    return rc;
}

/* 1 when an activation root of st in DRAM is written or read by a node
 * in d..p of its graph g. */
static int spill_in(const BkStage *st, const IrGraph *g, int d, int p)
{
    for (int i = d; i <= p; i++) {
        const IrNode *n = &g->nodes[i];
        for (int k = 0; k < n->nin + n->nout; k++) {
            int t = k < n->nin ? n->in[k] : n->out[k - n->nin];
            if (t < 0 || g->t[t].data) continue;
            const BkPlace *pl = &st->c.pl[bk_tensor_root(&st->c, t)];
            if (pl->placed && pl->region == ABM_REGION_ACTIVATIONS && !pl->internal && !pl->in_sram && !pl->band) return 1;
        }
    }
    return 0;
}

/* st's graph *ig rewritten by `how` (sink: node a moved to just before
 * node b; subsample: convolution a reads a subsampled copy) and built
 * again; the rewritten graph and its build replace *ig and st when the
 * cost model prices the stage lower. A rewrite or build that fails is not
 * taken. */
enum { REWRITE_SINK, REWRITE_SUBSAMPLE, REWRITE_SINK_SUB, REWRITE_OVERLAY, REWRITE_HOIST };
static int try_rewrite(BkStage *st, IrGraph *ig, int how, int a, int b, const AtlChip *chip, const BkOptions *opt,
                       const BkSplit *sp, AbmWriter *w, const uint64_t *io_fixed, uint64_t io_bytes, int layer_base, AtlErr *e)
{
    IrGraph cg;
    if (ir_clone(ig, &cg, e)) return -1;
    AtlErr ke;
    int ok = 1;
    if (how == REWRITE_OVERLAY) ok = bk_overlay_mark(&cg, &st->c, &ke) > 0;
    else if (how == REWRITE_HOIST) ok = bk_hoist_apply(&cg, &st->c, a, &ke) > 0;
    else {
        if (how != REWRITE_SUBSAMPLE) bk_sink_move(&cg, a, b);
        if (how != REWRITE_SINK) ok = !bk_subsample_apply(&cg, how == REWRITE_SINK_SUB ? b - 1 : a, &ke);
    }
    BkStage *alt = calloc(1, sizeof *alt);
    if (!alt) { ir_free(&cg); return atl_fail(e, "out of memory"); }
    int bok = ok && !stage_build_flow(alt, &cg, chip, opt, sp, w, io_fixed, io_bytes, layer_base, st->c.flow, &ke);
    if (bok && stage_cycles(alt) < stage_cycles(st)) {
        alt->flow_borrowed = st->flow_borrowed;   /* st's pricer (or the pool's, still borrowed) */
        st->flow_borrowed = 1;   /* freed while st->c.g is still the graph it was built on */
        stage_free(st);
        IrGraph old = *ig;   /* the rewritten graph becomes the stage's, alt its build (with st's pricer) */
        *ig = cg;
        cg = old;
        *st = *alt;
        st->c.g = ig;
        if (st->c.chip == &alt->shared) st->c.chip = &st->shared;
    } else
        stage_free(alt);
    free(alt);
    ir_free(&cg);
    return 0;
}

/* 1 when a node in lo..hi of g reads tensor t. */
static int read_in(const IrGraph *g, int t, int lo, int hi)
{
    for (int i = lo; i <= hi; i++)
        for (int q = 0; q < g->nodes[i].nin; q++)
            if (!g->nodes[i].dead && g->nodes[i].in[q] == t) return 1;
    return 0;
}

/* A split stage with activations in DRAM is built again with each of its
 * strided pointwise convolutions whose block holds one reading a
 * subsampled copy of its input made before the input's first reader, and
 * with each shortcut convolution whose block holds one run just before
 * the convolution whose residual it is (sink.c; a strided one whose
 * input the block reads after it, as int8 graphs list the downsample
 * first, moved and reading the copy in one rewrite where the move alone
 * did not pay), the last block first
 * (a rewrite moves only nodes from its own block on), each rewrite kept
 * when the cost model prices the stage lower with it (docs/backend.md,
 * "Shortcuts run late"); the stage becomes the build of the graph kept. */
#define SINK_MAX 8
static int sink_stage(BkStage *st, IrGraph *ig, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, AbmWriter *w,
                      const uint64_t *io_fixed, uint64_t io_bytes, int layer_base, AtlErr *e)
{
    if (opt->keep_activations || opt->no_reorder) return 0;
    int d[SINK_MAX], p[SINK_MAX], n = bk_subsample_find(ig, &st->c, d, SINK_MAX), floor = ig->nn;
    for (int k = n - 1; k >= 0; k--) {
        int first = d[k];   /* the block: from x's first reader */
        for (int i = d[k] - 1; i >= 0; i--)
            for (int q = 0; q < ig->nodes[i].nin; q++)
                if (ig->nodes[i].in[q] == ig->nodes[d[k]].in[0]) first = i;
        if (d[k] >= floor) continue;   /* moved by a later block's copy */
        floor = first;
        if (spill_in(st, ig, first, d[k]) &&
            try_rewrite(st, ig, REWRITE_SUBSAMPLE, d[k], 0, chip, opt, sp, w, io_fixed, io_bytes, layer_base, e))
            return -1;
    }
    n = bk_sink_find(ig, &st->c, d, p, SINK_MAX);
    for (int k = n - 1; k >= 0; k--) {
        /* a shortcut reading a subsampled copy kept above is not moved: its
         * copy would then live across the block's peak (ResNet-50's
         * layer2.0 prices higher so; one build fewer) */
        const char *in = ig->t[ig->nodes[d[k]].in[0]].name;
        size_t len = in ? strlen(in) : 0;
        if (len >= 10 && !strcmp(in + len - 10, "/subsample")) continue;
        if (!spill_in(st, ig, d[k], p[k])) continue;
        uint64_t was = stage_cycles(st);
        if (try_rewrite(st, ig, REWRITE_SINK, d[k], p[k], chip, opt, sp, w, io_fixed, io_bytes, layer_base, e)) return -1;
        /* a strided shortcut whose input the block reads after it (int8
         * graphs list the downsample first): moved, it also reads a
         * subsampled copy, or the input would live across the block */
        if (stage_cycles(st) == was && bk_subsample_ok(ig, d[k]) && read_in(ig, ig->nodes[d[k]].in[0], d[k] + 1, p[k]) &&
            try_rewrite(st, ig, REWRITE_SINK_SUB, d[k], p[k], chip, opt, sp, w, io_fixed, io_bytes, layer_base, e))
            return -1;
    }
    /* pointwise convolutions writing over their dying inputs, all at once
     * (alloc/place.c, pair_overlay; docs/backend.md, "Outputs over dying
     * inputs") */
    if (!opt->no_overlay && spill_in(st, ig, 0, ig->nn - 1) &&
        try_rewrite(st, ig, REWRITE_OVERLAY, 0, 0, chip, opt, sp, w, io_fixed, io_bytes, layer_base, e))
        return -1;
    /* a shortcut whose input x a pointwise convolution f reads before it
     * (and nothing else) runs before f instead, f's output over x's dying
     * bytes: the block's convolutions after f then run with no second
     * tensor of x's size beside the shortcut's output (ResNet-50's
     * layer1.0: its conv2 -> conv3 chain in SRAM; docs/backend.md,
     * "Shortcuts run late") */
    if (opt->no_overlay) return 0;
    n = bk_shortcut_find(ig, &st->c, d, p, SINK_MAX);
    for (int k = n - 1; k >= 0; k--) {
        int f = bk_hoist_at(ig, &st->c, d[k]);
        if (f >= 0 && spill_in(st, ig, f, p[k]) &&
            try_rewrite(st, ig, REWRITE_HOIST, d[k], 0, chip, opt, sp, w, io_fixed, io_bytes, layer_base, e))
            return -1;
    }
    return 0;
}

/* A chip stage's strided pointwise convolutions whose input x is in DRAM
 * (the stage's boundary: every cluster reads it there, each once per
 * output-channel chunk it computes) are tried reading a subsampled copy
 * of x made before x's first reader (sink.c's rewrite; a DMA copy of a
 * quarter of x, which placement may keep in SRAM), the last one first,
 * each built with the options st was built with and kept when the cost
 * model prices the stage lower (docs/backend.md, "Staged schedules", a
 * chip stage's downsample). */
static int chip_stage_subsample(BkStage *st, IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w,
                                const uint64_t *io_fixed, uint64_t io_bytes, int layer_base, AtlErr *e)
{
    if (opt->keep_activations || opt->no_reorder) return 0;
    BkOptions ob = *opt;
    if (st->c.bands) {   /* as chip_stage_bands built it */
        if (ob.sram_acts != BK_SRAM_ACTS_ROWS) ob.sram_acts = BK_SRAM_ACTS_BANDS;
        ob.no_shards = st->c.no_shards;
    }
    /* by output tensor: a rewrite kept inserts a node (and replaces g's
     * node storage; tensors keep their indices) */
    int outt[SINK_MAX], d[SINK_MAX], n = bk_subsample_find(g, &st->c, d, SINK_MAX);
    for (int k = 0; k < n; k++) outt[k] = g->nodes[d[k]].out[0];
    for (int k = n - 1; k >= 0; k--) {
        int cur[SINK_MAX], m = bk_subsample_find(g, &st->c, cur, SINK_MAX), at = -1;
        for (int q = 0; q < m && at < 0; q++)
            if (g->nodes[cur[q]].out[0] == outt[k]) at = cur[q];
        if (at < 0) continue;
        const IrNode *nd = &g->nodes[at];
        const BkPlace *pl = &st->c.pl[bk_tensor_root(&st->c, nd->in[0])];
        if (!pl->placed || pl->in_sram || pl->band) continue;
        /* worth a build only when the convolution reads more than its
         * weights and each cluster the strided cells of x once */
        const IrAttr *sa = ir_attr(nd, "strides");
        uint64_t least = ir_nbytes(&g->t[nd->in[1]]) + (uint64_t)chip->clusters * ir_nbytes(&g->t[nd->in[0]]) /
                                                           (uint64_t)(sa->ints[0] * sa->ints[1]);
        uint64_t rd = 0;
        for (int i = 0; i < st->sched.n; i++)
            if (st->sched.seg[i].layer && st->sched.seg[i].layer->node == at) rd += st->sched.seg[i].est_rd;
        if (rd <= least + least / 4) continue;
        if (try_rewrite(st, g, REWRITE_SUBSAMPLE, at, 0, chip, &ob, NULL, w, io_fixed, io_bytes, layer_base, e)) return -1;
    }
    return 0;
}

/* A chip stage of a staged schedule (the whole batch on every core, built
 * into *st with the options' SRAM mode) is built again with bands, each
 * image of the batch banded the same way ("Bands of several images" in
 * docs/backend.md), when try_bands allows, and the plan the cost model
 * prices lower kept (equal: the one built). When placement gave a tensor
 * channel shards ("Channel shards") and that plan prices higher than the
 * DRAM plan, the stage is built a third time without them
 * (BkOptions.no_shards) and kept if cheaper. (Always building the third
 * plan would cost ResNet-50 at batch 8 on a1x16 about 5 CPU-s of
 * compile.) A bands build that fails is not taken. */
static void chip_stage_bands(BkStage *st, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w,
                             const uint64_t *io_fixed, uint64_t io_bytes, int layer_base)
{
    if (!try_bands(g, chip, opt, NULL, 1)) return;
    BkOptions ob = *opt;
    ob.sram_acts = BK_SRAM_ACTS_BANDS;
    /* bands with channel shards where placement takes them, then (when
     * it did and they lost to the DRAM plan) without */
    for (int pass = 0; pass < 2; pass++) {
        BkStage alt;
        AtlErr be;
        ob.no_shards = opt->no_shards || pass;
        if (stage_build(&alt, g, chip, &ob, NULL, w, io_fixed, io_bytes, layer_base, &be)) {
            stage_free(&alt);   /* a failed build still holds what it allocated */
            if (ob.no_shards) return;
            continue;
        }
        int shards = 0;
        for (int t = 0; alt.c.band && t < alt.c.g->nt; t++) shards |= alt.c.pl[t].band && alt.c.band[t].shard;
        int won = stage_cycles(&alt) < stage_cycles(st);
        if (won) {
            stage_free(st);
            *st = alt;   /* placement chip: nothing in a stage points into it */
        } else
            stage_free(&alt);
        if (!shards || won) return;
    }
}

/* A chip stage the search priced with bands (BkStagePlan.bands_at: they
 * beat its DRAM plan there) is built with them alone, without the DRAM
 * plan first (a build of the stage saved: ResNet-50 at batch 8 on a1,
 * about 2 CPU-s). 0 built into *st; -1 when the bands build fails (*st
 * freed: the caller builds as chip_stage_bands does). */
static int chip_stage_bands_first(BkStage *st, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w,
                                  const uint64_t *io_fixed, uint64_t io_bytes, int layer_base)
{
    if (!try_bands(g, chip, opt, NULL, 1)) return -1;
    BkOptions ob = *opt;
    ob.sram_acts = BK_SRAM_ACTS_BANDS;
    AtlErr be;
    if (!stage_build(st, g, chip, &ob, NULL, w, io_fixed, io_bytes, layer_base, &be)) return 0;
    stage_free(st);
    memset(st, 0, sizeof *st);
    return -1;
}

/* Boundaries in SRAM (docs/backend.md, "Boundaries in SRAM"). A boundary
 * between two split stages that run on the same clusters (each cluster
 * keeps its images from stage to stage, instances k*I/K .. (k+1)*I/K - 1)
 * need not go through DRAM: each cluster's images of it fit a range at
 * the top of its SRAM, where the producer's instances write them one after
 * another and the consumer's instances read them. Both stages then keep
 * their own activations below that range (BkSplit.sram_cap), so the
 * producer may spill more; the consumer reads no boundary from DRAM and
 * needs no boundary copy. The cost model decides, per boundary, in stage
 * order: the two stages are built again with the boundary in SRAM and
 * kept when they price lower (BkOptions.stage_sram auto; always: wherever
 * it fits; never: not tried). */
typedef struct SramBounds {
    int n, nt;
    int on[BK_MAX_STAGES];                            /* boundary i (into stage i) in SRAM */
    uint64_t base[BK_MAX_STAGES], img[BK_MAX_STAGES]; /* its SRAM offset, its bytes an image */
    int lb[BK_MAX_STAGES];                            /* stage i's first layer id */
    uint64_t *io_sram;                                /* n x (nt + 1): stage i's BkSplit.io_sram */
    BkStage *shells[2 * BK_MAX_STAGES];               /* built stages moved into st[]: their contexts
                                                         point into these (c.chip, its flow), freed last */
    int nshells;
} SramBounds;

/* Stage s's split at micro-batch m, its boundaries in SRAM placed (its
 * activations below them). */
static BkSplit bounds_split(const SramBounds *sb, int s, int B, int m, const AtlChip *chip, const int *bound)
{
    BkSplit sp = split_of(B, m, chip);
    uint64_t *io = sb->io_sram + (size_t)(sb->nt + 1) * (size_t)s, cap = 0;
    memset(io, 0, (size_t)(sb->nt + 1) * sizeof *io);
    if (s && sb->on[s]) { io[bound[s]] = sb->base[s] + 1; cap = sb->base[s]; }
    if (s + 1 < sb->n && sb->on[s + 1]) { io[bound[s + 1]] = sb->base[s + 1] + 1; cap = sb->base[s + 1]; }
    if (cap) { sp.io_sram = io; sp.sram_cap = cap; }
    return sp;
}

/* The emitter's moves of stage s's SRAM boundaries (an instance of m images). */
static void bounds_moves(BkStage *st, const SramBounds *sb, int s, int m)
{
    st->nsram = 0;
    for (int b = s; b <= s + 1; b++)
        if (b > 0 && b < sb->n && sb->on[b]) {
            st->sram_at[st->nsram] = sb->base[b];
            st->sram_inst[st->nsram++] = (uint64_t)m * sb->img[b];
        }
}

/* *dst (built) replaced by *src, whose shell is kept until the end. */
static void stage_replace(SramBounds *sb, BkStage *dst, BkStage *src)
{
    stage_free(dst);
    *dst = *src;
    sb->shells[sb->nshells++] = src;
}

/* Boundary i of plan (stages i-1 and i built into st, ig their instance
 * graphs, sg[i] stage i's graph) priced in SRAM: both stages built again
 * with it there and kept when they price lower. 0 also when not tried or
 * not taken; -1 on an error. */
static int sram_boundary(SramBounds *sb, BkStage *st, IrGraph *ig, const IrGraph *sg, int i, const BkStagePlan *plan,
                         const IrGraph *g, const int *bound, int B, const AtlChip *chip, const BkOptions *opt, AbmWriter *w,
                         const uint64_t *io_fixed, uint64_t io_bytes, AtlErr *e)
{
    if (opt->stage_sram == BK_SRAM_NEVER || opt->keep_activations || plan->chip[i - 1] || plan->chip[i]) return 0;
    BkSplit a = split_of(B, plan->m[i - 1], chip), b = split_of(B, plan->m[i], chip);
    int K = a.clusters;
    if (K != b.clusters || a.instances % K || b.instances % K || B % K) return 0;
    uint64_t whole = (uint64_t)ir_nbytes(&g->t[bound[i]]), img = whole / (uint64_t)B;
    uint64_t region = img * (uint64_t)(B / K), top = i > 1 && sb->on[i - 1] ? sb->base[i - 1] : (uint64_t)chip->sram_bytes;
    if (!img || img % 64 || img * (uint64_t)B != whole || region + 64 > top) return 0;
    if (opt->stage_sram == BK_SRAM_AUTO && region * 4 > (uint64_t)chip->sram_bytes) return 0;   /* it would crowd the stages */
    sb->on[i] = 1;
    sb->base[i] = (top - region) / 64 * 64;
    sb->img[i] = img;
    uint64_t was = stage_cycles(&st[i - 1]) + stage_cycles(&st[i]);
    BkStage *alt0 = calloc(1, sizeof *alt0), *alt1 = calloc(1, sizeof *alt1);
    IrGraph old = ig[i];   /* stage i's graph stays at ig[i] (its context points there): the new one goes there */
    int swapped = 0, ok = 0, rc = 0, b0 = 0, b1 = 0;
    char why[256];
    AtlErr ae;   /* a plan that does not build (its SRAM too small, ...) is not taken */
    if (!alt0 || !alt1) { rc = atl_fail(e, "out of memory"); goto out; }
    BkSplit s0 = bounds_split(sb, i - 1, B, plan->m[i - 1], chip, bound);
    b0 = 1;
    if (stage_build(alt0, &ig[i - 1], chip, opt, &s0, w, io_fixed, io_bytes, sb->lb[i - 1], &ae)) goto out;
    IrGraph fresh;
    if (bk_split_graph(&sg[i], plan->m[i], &fresh, why, sizeof why, &ae)) goto out;
    ig[i] = fresh;
    swapped = 1;
    BkSplit s1 = bounds_split(sb, i, B, plan->m[i], chip, bound);
    b1 = 1;
    if (stage_build(alt1, &ig[i], chip, opt, &s1, w, io_fixed, io_bytes, sb->lb[i - 1] + alt0->nunits, &ae)) goto out;
    if (sink_stage(alt1, &ig[i], chip, opt, &s1, w, io_fixed, io_bytes, sb->lb[i - 1] + alt0->nunits, &ae)) goto out;   /* as compile_staged */
    if (copy_rereads(alt1, &ig[i], chip, opt, &s1, w, io_fixed, io_bytes, sb->lb[i - 1] + alt0->nunits, &ae)) goto out;
    ok = opt->stage_sram == BK_SRAM_ALWAYS || stage_cycles(alt0) + stage_cycles(alt1) < was;
out:
    if (ok) {
        stage_replace(sb, &st[i - 1], alt0);
        stage_replace(sb, &st[i], alt1);
        ir_free(&old);
        bounds_moves(&st[i - 1], sb, i - 1, plan->m[i - 1]);
        bounds_moves(&st[i], sb, i, plan->m[i]);
    } else {
        if (alt0 && b0) stage_free(alt0);
        if (alt1 && b1) stage_free(alt1);
        free(alt0);
        free(alt1);
        if (swapped) {
            ir_free(&ig[i]);
            ig[i] = old;
        }
        sb->on[i] = 0;
        bounds_split(sb, i - 1, B, plan->m[i - 1], chip, bound);   /* as stage i - 1 was built */
    }
    return rc;
}

/* Staged: g (batch B, separable) cut by plan into stages, each compiled as
 * placement split compiles a whole graph (at its micro-batch, on K
 * clusters, each cluster keeping its images from stage to stage) or, a
 * chip stage, as placement chip does (the whole batch on every core), into
 * one variant: the io region holds g's inputs and outputs and every
 * boundary tensor (whole batch), the activation region the largest
 * stage's (the stages of a cluster run one after another), the streams
 * every stage's instances in stage order. A chip barrier opens a chip
 * stage (it reads images every cluster wrote); its own last barrier, a
 * chip one, closes it before the next stage. */
static int compile_staged(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkStagePlan *plan, int K,
                          AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    int B = (int)g->t[g->inputs[0]].dims[0], n = plan->n, rc = -1, built = 0, layer_base = 0;
    BkSummary own;   /* the summary the stage rows come from when the caller wants none */
    memset(&own, 0, sizeof own);
    if (!sum) sum = &own;
    IrGraph sg[BK_MAX_STAGES], ig[BK_MAX_STAGES];
    int have_sg = 0, have_ig[BK_MAX_STAGES] = {0};
    BkStage *st = calloc((size_t)n, sizeof *st);
    uint64_t *io_fixed = calloc((size_t)g->nt + 1, sizeof *io_fixed);
    SramBounds sb;
    memset(&sb, 0, sizeof sb);
    BkEmit emit;
    memset(&emit, 0, sizeof emit);
    if (!st || !io_fixed) { atl_fail(e, "out of memory"); goto done; }
    memset(sum, 0, sizeof *sum);
    if (check_options(chip, opt, e)) goto done;
    /* the io layout: inputs, outputs, then the boundaries, whole batch each */
    int bound[BK_MAX_STAGES] = {-1};
    for (int i = 1; i < n; i++)
        if ((bound[i] = bk_stage_boundary(g, plan->start[i])) < 0) { atl_fail(e, "internal: stage %d has no boundary tensor", i); goto done; }
    uint64_t io_bytes = bk_stages_io(g, opt, bound + 1, n - 1, io_fixed), act = 0;
    sb.n = n;
    sb.nt = g->nt;
    if (!(sb.io_sram = calloc((size_t)(g->nt + 1) * (size_t)n, sizeof *sb.io_sram))) { atl_fail(e, "out of memory"); goto done; }
    for (int i = 0; i < n; i++) {
        char why[256];
        sb.lb[i] = layer_base;
        if (bk_stage_graph(g, plan->start[i], plan->start[i + 1], &sg[i], e)) goto done;
        have_sg = i + 1;
        BkSplit sp = split_of(B, plan->m[i], chip);
        if (!plan->chip[i]) {
            int r = bk_split_graph(&sg[i], plan->m[i], &ig[i], why, sizeof why, e);
            if (r) { if (r > 0) atl_fail(e, "stage %d: %s", i, why); goto done; }
            have_ig[i] = 1;
            if (i && copy_boundary_in(&ig[i], bound[i], chip, opt, &sp, e)) goto done;
        }
        built = i + 1;
        if (plan->chip[i] && plan->bands_at > 0 && plan->bands_at == plan->start[i] && !chip_stage_bands_first(&st[i], &sg[i], chip, opt, w, io_fixed,
                                                                                        io_bytes, layer_base)) {
            /* built with bands, as the search priced it */
        } else if (stage_build(&st[i], plan->chip[i] ? &sg[i] : &ig[i], chip, opt, plan->chip[i] ? NULL : &sp, w, io_fixed,
                               io_bytes, layer_base, e))
            goto done;
        else if (plan->chip[i])
            chip_stage_bands(&st[i], &sg[i], chip, opt, w, io_fixed, io_bytes, layer_base);
        if (plan->chip[i] && chip_stage_subsample(&st[i], &sg[i], chip, opt, w, io_fixed, io_bytes, layer_base, e)) goto done;
        if (!plan->chip[i] && sink_stage(&st[i], &ig[i], chip, opt, &sp, w, io_fixed, io_bytes, layer_base, e)) goto done;
        if (!plan->chip[i] && copy_rereads(&st[i], &ig[i], chip, opt, &sp, w, io_fixed, io_bytes, layer_base, e)) goto done;
        if (i && sram_boundary(&sb, st, ig, sg, i, plan, g, bound, B, chip, opt, w, io_fixed, io_bytes, e)) goto done;
        layer_base = sb.lb[i] + st[i].nunits;
        if (i && sb.on[i]) layer_base = sb.lb[i - 1] + st[i - 1].nunits + st[i].nunits;
        if (i && sb.on[i]) sb.lb[i] = sb.lb[i - 1] + st[i - 1].nunits;
    }
    for (int i = 0; i < n; i++) {
        uint64_t region = st[i].c.act_bytes * (uint64_t)(plan->chip[i] ? 1 : K);   /* split: a copy per cluster */
        if (region > act) act = region;
    }
    double t0 = atl_clock_s();
    if (bk_emit_init(&emit, &st[0].c, e)) goto done;
    for (int i = 0; i < n; i++) {
        /* into a chip stage: every core waits for every other. On the K
         * clusters that ran the stage before, the barrier counts for its
         * last layer (they wait there for its slowest cluster: its
         * imbalance); on the others, which had nothing to do in it, for
         * the chip stage's first, as before. So the chip stage's profile
         * row holds no wait of the stage before's cores. */
        if (i && plan->chip[i] && !plan->chip[i - 1] && st[i].nunits && st[i - 1].sched.n) {
            int cores = cfg_total_cores(chip), ran = K * chip->cores_per_cluster;
            const BkSchedule *before = &st[i - 1].sched;
            BkBarrier all = {0, ISA_NUM_ENGINES * cores, ISA_SCOPE_CHIP, {0, ran}};
            if (bk_emit_barrier(&emit, &all, before->seg[before->n - 1].layer->layer_id, e)) goto done;
            all.set = (BkCoreSet){ran, cores - ran};
            if (ran < cores && bk_emit_barrier(&emit, &all, st[i].sched.seg[0].layer->layer_id, e)) goto done;
        }
        if (stage_emit(&st[i], &emit, e)) goto done;
    }
    if (bk_emit_finish(&emit, e)) goto done;
    int ms[BK_MAX_STAGES];
    for (int i = 0; i < n; i++) ms[i] = plan->chip[i] ? B : plan->m[i];
    BkStages all = {st, n, B, ms, bound, io_fixed, io_bytes, act};
    uint32_t variant;
    if (bk_stages_variant(&stage_ops, g, chip, opt, &all, &emit, &variant, sum, e)) goto done;
    for (int i = 0; i < n; i++) {
        sum->stage_cores[i] = plan->chip[i] ? cfg_total_cores(chip) : K * chip->cores_per_cluster;
        sum->stage_est[i] = stage_cycles(&st[i]);
        sum->est_cycles += sum->stage_est[i];
    }
    sum->phase_s[BK_PHASE_EMIT] += atl_clock_s() - t0;
    sum->act_dram_tensors += n - 1;   /* the stage boundaries, in the io region */
    for (int i = 1; i < n; i++) {   /* but those kept in the clusters' SRAM */
        sum->act_dram_tensors -= sb.on[i];
        sum->stage_in_sram[i] = sb.on[i];
    }
    sum->instances = B / ms[0];
    sum->micro_batch = ms[0];
    sum->clusters = K;
    if (add_stage_rows(w, variant, sum, e)) goto done;
    rc = 0;
done:
    if (sum == &own) bk_summary_free(&own);
    bk_emit_free(&emit);
    for (int i = 0; i < built; i++) stage_free(&st[i]);
    for (int i = 0; i < sb.nshells; i++) free(sb.shells[i]);
    free(sb.io_sram);
    for (int i = 0; i < have_sg; i++) if (have_ig[i]) ir_free(&ig[i]);
    for (int i = 0; i < have_sg; i++) ir_free(&sg[i]);
    free(st);
    free(io_fixed);
    return rc;
}

/* The chip stage of a staged search priced with bands: nodes [a, nn) of g
 * compiled as compile_staged compiles a chip stage with bands (of several
 * images, channel shards where placement takes them), each unit's cost
 * into uc with its first node in g's numbering. The search's chip price
 * is the whole graph's DRAM plan (one build; bands there too would be a
 * second build of the whole graph at the whole batch), which misses what
 * bands and shards save late in the network: ResNet-50 fp32 at batch 8
 * on a1 priced layer4.0 in stage 1 at micro-batch 2, though in the chip
 * stage it is 0.4 M cycles faster. */
static int chip_tail_costs(const IrGraph *g, int a, const AtlChip *chip, const BkOptions *opt, BkStageCosts *uc, AtlErr *e)
{
    IrGraph sg;
    if (bk_stage_graph(g, a, g->nn, &sg, e)) return -1;
    int rc = -1, built = 0;
    int *map = malloc((size_t)(g->nn + 1) * sizeof *map), nmap = 0;   /* stage node -> g node */
    AbmWriter *scratch = abm_writer_new(cfg_fingerprint(chip));
    BkOptions ob = *opt;
    ob.sram_acts = BK_SRAM_ACTS_BANDS;
    BkStage st;
    if (!map || !scratch) { atl_fail(e, "out of memory"); goto out; }
    abm_writer_set_level(scratch, 0);   /* never written */
    for (int i = a; i < g->nn; i++)
        if (!g->nodes[i].dead) map[nmap++] = i;
    if (nmap != sg.nn) { atl_fail(e, "internal: chip stage of %d nodes from %d", sg.nn, nmap); goto out; }
    built = 1;   /* a failed build still holds what it allocated */
    if (stage_build(&st, &sg, chip, &ob, NULL, scratch, NULL, 0, 0, e) || stage_unit_costs(&st, uc, e)) goto out;
    for (int u = 0; u < uc->n; u++) uc->first[u] = uc->first[u] < sg.nn ? map[uc->first[u]] : g->nn;
    rc = 0;
out:
    if (built) stage_free(&st);
    abm_writer_free(scratch);
    free(map);
    ir_free(&sg);
    return rc;
}

/* The staged search (staged.c): the whole graph priced as placement split
 * at every micro-batch m that divides the images per cluster (1, 2, 4, ...)
 * and, with_chip (placement auto), as placement chip (its cycles into
 * *chip_est), each unit's cost
 * kept; the cut candidates where every split compile starts a unit; the
 * plan of least cycles (one stage is uniform). 1 when no search is
 * possible (rewritten graph, uneven batch), -1 on an error. */
static int search_stages(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int K, BkStagePlan *plan, uint64_t *chip_est,
                         int with_chip, AtlErr *e)
{
    int B = (int)g->t[g->inputs[0]].dims[0];
    if (bk_rewrite_count(g) || bk_rewrite_ops_count(g) || K < 1 || B % K) return 1;
    int P = B / K, nm = 0, rc = -1, ncuts = 0;
    BkStageCosts costs[5];
    memset(costs, 0, sizeof costs);
    int *cuts = malloc(((size_t)g->nn + 1) * sizeof *cuts);
    uint64_t *cut_cycles = malloc(((size_t)g->nn + 1) * sizeof *cut_cycles);
    if (!cuts || !cut_cycles) { atl_fail(e, "out of memory"); goto done; }
    for (int m = 1; m <= P && nm < 4; m *= 2) {
        if (P % m) continue;
        IrGraph inst;
        char why[256];
        int r = bk_split_graph(g, m, &inst, why, sizeof why, e);
        if (r < 0) goto done;
        if (r > 0) continue;
        BkSplit sp = split_of(B, m, chip);
        uint64_t total;
        costs[nm].m = m;
        r = estimate(&inst, chip, opt, &sp, &total, &costs[nm], e);
        ir_free(&inst);
        nm++;
        if (r) goto done;
    }
    if (!nm) { rc = 1; goto done; }
    int nsplit = nm;
    /* the whole batch on the whole chip: a stage may run so (its weights read once) */
    costs[nm].m = B;
    costs[nm].chip = 1;
    /* priced with the DRAM plan alone (try_bands: not also with bands of
     * several images, a second build of the whole graph: ResNet-50 at
     * batch 8 would compile in 27 CPU-s instead of 16); a chip stage is
     * built with bands too, and keeps them where cheaper
     * (chip_stage_bands), so its cost is at most the one the search saw */
    if (!with_chip) { /* --placement split: split stages only */ }
    else if (!estimate(g, chip, opt, NULL, chip_est, &costs[nm], e)) nm++;
    else {   /* no chip stage (placement auto reports why the chip cannot compile it) */
        free(costs[nm].first); free(costs[nm].est);
        memset(&costs[nm], 0, sizeof costs[nm]);
        *chip_est = UINT64_MAX;
    }
    int n = bk_stage_cuts(g, cuts, g->nn);
    if (n < 0) { atl_fail(e, "out of memory"); goto done; }
    double bpc = chip->dram_gbps * 1000.0 / chip->freq_mhz / K;   /* a cluster's DRAM bytes per cycle */
    for (int i = 0; i < n; i++) {
        int ok = 1;
        for (int k = 0; k < nsplit && ok; k++) {
            ok = 0;
            for (int u = 0; u < costs[k].n && !ok; u++) ok = costs[k].first[u] == cuts[i];
        }
        int t = ok ? bk_stage_boundary(g, cuts[i]) : -1;
        if (t < 0) continue;
        double bytes = (double)ir_numel(&g->t[t]) * isa_dtype_size(opt->dtype) * P / B;
        cuts[ncuts] = cuts[i];
        cut_cycles[ncuts++] = (uint64_t)(2 * bytes / bpc);
    }
    /* into or out of a chip stage: a chip barrier, whose latency the fastest cluster waits on top */
    uint64_t chip_sync = (uint64_t)chip->barrier_cycles;
    rc = bk_stage_plan(costs, nm, cuts, ncuts, g->nn, P, cut_cycles, chip_sync, plan) ? 1 : 0;
    /* a chip stage chosen: priced again with bands from one cut earlier
     * on (so the search may also start it there); where they beat the
     * DRAM plan's units, the plan is searched again with their prices.
     * Not when the split stages leave clusters idle (a batch smaller than
     * the chip's clusters): ResNet-50 at batch 8 on a1x16 (8 of 16
     * clusters split) kept its plan and compiled in 36 CPU-s instead of
     * 22, a bands build on 16 clusters of layer3.4 on. */
    int chip_at = -1;
    for (int i = 0; !rc && i < plan->n && chip_at < 0; i++)
        if (plan->chip[i]) chip_at = plan->start[i];
    if (chip_at > 0 && !opt->no_chip_reprice && K == chip->clusters && try_bands(g, chip, opt, NULL, 1)) {
        BkStageCosts tail, *c = &costs[nm - 1];
        memset(&tail, 0, sizeof tail);
        int from = bk_stage_reach(c, cuts, ncuts, chip_at, g->nn);
        if (from < 0) from = chip_at;
        BkStagePlan again;
        AtlErr te;   /* a tail that does not build keeps the first plan */
        if (!chip_tail_costs(g, from, chip, opt, &tail, &te)) {
            uint64_t dram = 0, bands = 0;
            for (int u = 0; u < c->n; u++) dram += c->first[u] >= from ? c->est[u] : 0;
            for (int u = 0; u < tail.n; u++) bands += tail.est[u];
            if (bands < dram && !bk_stage_splice(c, from, &tail) &&
                !bk_stage_plan(costs, nm, cuts, ncuts, g->nn, P, cut_cycles, chip_sync, &again)) {
                *plan = again;
                plan->bands_at = from;
            }
        }
        free(tail.first);
        free(tail.est);
    }
done:
    for (int k = 0; k < 5; k++) { free(costs[k].first); free(costs[k].est); }
    free(cuts);
    free(cut_cycles);
    return rc;
}

/* BkOptions.stage_plan parsed into plan (stage starts at the cuts whose
 * only crossing tensor is named), checked: micro-batches growing from
 * split stage to split stage, each dividing the images per cluster P; a
 * stage given as `c` runs as placement chip (the whole batch, P x K
 * images, on every core). */
static int parse_stage_plan(const IrGraph *g, const char *text, int P, int K, BkStagePlan *plan, AtlErr *e)
{
    memset(plan, 0, sizeof *plan);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    int *cuts = malloc(((size_t)g->nn + 1) * sizeof *cuts), ncuts = cuts ? bk_stage_cuts(g, cuts, g->nn) : -1, rc = -1;
    if (ncuts < 0) { free(cuts); return atl_fail(e, "out of memory"); }
    char *save = NULL;
    int last_m = 0;   /* the last split stage's micro-batch */
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (plan->n == BK_MAX_STAGES) { atl_fail(e, "--stage-plan: more than %d stages", BK_MAX_STAGES); goto done; }
        char *colon = strrchr(item, ':'), *end;
        if (plan->n && !colon) { atl_fail(e, "--stage-plan: '%s' is not TENSOR:M or TENSOR:c", item); goto done; }
        if (!plan->n && colon) { atl_fail(e, "--stage-plan: the first item is stage 0's micro-batch (or c), not '%s'", item); goto done; }
        const char *mtext = colon ? colon + 1 : item;
        int is_chip = !strcmp(mtext, "c");
        long mb = is_chip ? (long)P * K : strtol(mtext, &end, 10);
        if (!is_chip && (end == mtext || *end || mb < 1 || P % mb)) {
            atl_fail(e, "--stage-plan: micro-batch '%s' does not divide the %d images each cluster runs (or is not c: the "
                     "stage on the whole chip)", mtext, P);
            goto done;
        }
        if (!is_chip && mb <= last_m) {
            atl_fail(e, "--stage-plan: micro-batches must grow stage by stage (%ld after %d)", mb, last_m);
            goto done;
        }
        if (!is_chip) last_m = (int)mb;
        plan->chip[plan->n] = is_chip;
        int start = 0;
        if (colon) {
            *colon = 0;
            start = -1;
            for (int i = 0; i < ncuts && start < 0; i++) {
                int t = bk_stage_boundary(g, cuts[i]);
                if (t >= 0 && g->t[t].name && !strcmp(g->t[t].name, item) && cuts[i] > plan->start[plan->n - 1]) start = cuts[i];
            }
            if (start < 0) {
                atl_fail(e, "--stage-plan: the graph cannot be cut at '%s' (it must be the only tensor crossing, after the "
                         "previous cut)", item);
                goto done;
            }
        }
        plan->start[plan->n] = start;
        plan->m[plan->n++] = (int)mb;
    }
    if (!plan->n) { atl_fail(e, "--stage-plan: empty"); goto done; }
    plan->start[plan->n] = g->nn;
    plan->est = 0;
    rc = 0;
done:
    free(cuts);
    return rc;
}

/* Placement over clusters: split (the batch in instances, one cluster
 * each) when asked, or with placement auto when the batch has two images
 * or more, the graph is separable and the cost model prices split
 * cheaper; else chip. Split is staged (search_stages) unless --micro-batch or
 * schedule uniform fixes one micro-batch. */
static int compile_placed(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w, BkSummary *sum, AtlErr *e);

/* A batch of several images may be built many times (the staged search,
 * its stages, their rewrites, a chip stage with bands): those builds
 * share the pool's pricers and the segments they priced (cost/pool.c,
 * docs/backend.md "Segments priced once per compile"). One image is built
 * once or twice, sharing a pricer already (compile_graph). */
int bk_compile(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    BkOptions dflt;
    if (!opt) { bk_options_default(&dflt); opt = &dflt; }
    int B = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? (int)g->t[g->inputs[0]].dims[0] : 1;
    if (B < 2 || opt->pricers) return compile_placed(g, chip, opt, w, sum, e);
    BkOptions o = *opt;
    if (!(o.pricers = bk_flow_pool_new())) return atl_fail(e, "out of memory");
    int rc = compile_placed(g, chip, &o, w, sum, e);
    bk_flow_pool_free(o.pricers);
    return rc;
}

static int compile_placed(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    if (opt->placement < BK_PLACE_AUTO || opt->placement > BK_PLACE_PIPELINE)
        return atl_fail(e, "backend: placement %d is not one of auto, chip, split, pipeline", opt->placement);
    if (opt->schedule != BK_SCHED_STAGED && opt->schedule != BK_SCHED_UNIFORM)
        return atl_fail(e, "backend: schedule %d is not one of staged, uniform", opt->schedule);
    if (opt->micro_batch < 0) return atl_fail(e, "backend: micro-batch %d is negative", opt->micro_batch);
    int B = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? (int)g->t[g->inputs[0]].dims[0] : 1;
    int K = chip->clusters < B ? chip->clusters : B;
    int place = opt->stage_plan ? BK_PLACE_SPLIT : opt->placement;   /* a stage plan is split */
    int m = opt->micro_batch ? opt->micro_batch : (K > 0 && B % K == 0 ? B / K : 1);
    char why[256] = "";
    if (place == BK_PLACE_CHIP) snprintf(why, sizeof why, "asked for");
    else if (opt->keep_activations) snprintf(why, sizeof why, "--keep-activations keeps every activation in DRAM");
    else if (place == BK_PLACE_AUTO && chip->clusters < 2) snprintf(why, sizeof why, "the chip has one cluster");
    else if (place == BK_PLACE_AUTO && B < 2) snprintf(why, sizeof why, "batch %d: one image, nothing to split", B);
    IrGraph inst;
    int split = 0;
    if (!why[0]) {
        int rc = bk_split_graph(g, m, &inst, why, sizeof why, e);
        if (rc < 0) return -1;
        split = rc == 0;
        if (split) ir_free(&inst);
    }
    /* the split plan: one stage at m, or what the search finds */
    BkStagePlan plan;
    memset(&plan, 0, sizeof plan);
    plan.n = 1;
    plan.start[1] = g->nn;
    plan.m[0] = m;
    plan.est = UINT64_MAX;
    int searched = 0;
    uint64_t chip_est = UINT64_MAX, split_est = UINT64_MAX;
    if (opt->stage_plan) {
        if (!split) return atl_fail(e, "--stage-plan: %s", why[0] ? why : "placement chip");
        if (B % K) return atl_fail(e, "--stage-plan: the batch %d does not split evenly over %d clusters", B, K);
        if (parse_stage_plan(g, opt->stage_plan, B / K, K, &plan, e)) return -1;
        if (plan.n == 1) return atl_fail(e, "--stage-plan: one stage; use %s", plan.chip[0] ? "--placement chip" : "--micro-batch");
        return compile_staged(g, chip, opt, &plan, K, w, sum, e);
    }
    if (split && !opt->micro_batch && opt->schedule == BK_SCHED_STAGED && place != BK_PLACE_PIPELINE) {
        int r = search_stages(g, chip, opt, K, &plan, &chip_est, place == BK_PLACE_AUTO, e);
        if (r < 0 && place != BK_PLACE_AUTO) return -1;
        /* auto: a graph split cannot compile runs on the whole chip */
        if (r < 0) { split = 0; snprintf(why, sizeof why, "split does not compile: %.200s", e->msg); }
        searched = r == 0;
    }
    int separable = split;
    if (split && place == BK_PLACE_AUTO) {
        /* the cost model chooses between chip and split */
        split_est = plan.est;
        int r = 0;
        if (!searched) {
            r = bk_split_graph(g, plan.m[0], &inst, why, sizeof why, e);
            if (r < 0) return -1;
            BkSplit sp = split_of(B, plan.m[0], chip);
            if (r == 0) {
                r = estimate(&inst, chip, opt, &sp, &split_est, NULL, e);
                ir_free(&inst);
                if (r) snprintf(why, sizeof why, "split does not compile: %.200s", e->msg);
            }
        }
        if (r) split = 0;
        else if (chip_est == UINT64_MAX && estimate(g, chip, opt, NULL, &chip_est, NULL, e)) return -1;   /* the search priced it */
        else if (chip_est <= split_est) {
            split = 0;
            snprintf(why, sizeof why, "the cost model prices it at %llu cycles, split at %llu", (unsigned long long)chip_est,
                     (unsigned long long)split_est);
        }
    }
    /* placement pipeline (pipeline.c): asked for, or auto's choice where the cost model prices it lower still */
    if (place == BK_PLACE_PIPELINE || (place == BK_PLACE_AUTO && separable)) {
        int r = bk_pipeline_choose(&stage_ops, g, chip, opt, place == BK_PLACE_PIPELINE, chip_est, split ? split_est : UINT64_MAX,
                                   w, sum, why, sizeof why, e);
        if (r <= 0) return r;
    }
    if (!split) {
        if (place == BK_PLACE_SPLIT) return atl_fail(e, "--placement split: %s", why);
        int rc = compile_rewritten(g, chip, opt, NULL, 0, w, sum, e);
        if (!rc && sum) snprintf(sum->placement_why, sizeof sum->placement_why, "%s", why);
        return rc;
    }
    if (plan.n > 1) return compile_staged(g, chip, opt, &plan, K, w, sum, e);
    if (bk_split_graph(g, plan.m[0], &inst, why, sizeof why, e)) return atl_fail(e, "--placement split: %s", why);
    BkSplit sp = split_of(B, plan.m[0], chip);
    int rc = compile_rewritten(&inst, chip, opt, &sp, 0, w, sum, e);
    ir_free(&inst);
    return rc;
}

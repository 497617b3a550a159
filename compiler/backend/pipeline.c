/* pipeline.c - placement pipeline: the stages of a network pipelined over
 * the clusters of a chip with cluster links ([noc] cluster_links = 1).
 *
 * Reads: a canonicalised graph of batch B, separable along the batch
 *   (split.c), the chip, the options.
 * Does:
 *   - the plan (bk_pipeline_plan): the whole graph priced as placement
 *     split at micro-batch m (each unit's cost, as the staged search
 *     prices it), then for 2..8 stages the cuts (bk_stage_cuts, where one
 *     tensor crosses) that balance the stages' cycles, and the clusters of
 *     each stage, given one at a time to the stage whose extra cluster
 *     shortens the pipeline most; the pipeline's price is the fill (one
 *     instance through every stage) plus the slowest stage's steady state
 *     ((instances on one of its clusters - 1) x its cycles per instance;
 *     with one buffer, the producer's cycles too), its stages priced again
 *     with the DRAM shared by the clusters busy at once on average
 *     (busy_clusters);
 *   - the code (bk_compile_pipeline): each stage compiled as placement
 *     split compiles a graph, at micro-batch m; instance j of stage s runs
 *     on the (j mod clusters[s])-th of the stage's clusters (cluster_of;
 *     counted backwards where that puts producers and consumers fewer
 *     links apart, orient), all its units closed by that cluster's
 *     barrier. The input and output of the whole graph are
 *     in the io region as always; a stage boundary never touches DRAM: the
 *     producing stage stores it straight into the consuming cluster's SRAM
 *     over the NoC (its stores become peer@C: operands, emit.c), into
 *     buffer (j / clusters[s+1]) mod slots of that cluster, and the
 *     consumer's loads read it there.
 *   - the synchronisation, between the two clusters concerned only (never
 *     a chip barrier): after an instance's last barrier, core 0 of its
 *     cluster sends a 64-byte notify into the consumer's SRAM that
 *     signals DATA[buffer] on every core there; the consumer's DMA streams
 *     wait on it before the instance; when the consumer's instance is done
 *     it hands the buffer back with a credit into the SRAM of the producer
 *     of the buffer's next instance, signalling CREDIT[its own index in its
 *     stage] there, on which that producer waits before the instance that
 *     writes the buffer. A credit semaphore per consumer cluster keeps
 *     credits from different consumers apart (they may arrive in any
 *     order); DATA per buffer likewise; every dependence points to an
 *     earlier instance, so the pipeline cannot deadlock.
 * SRAM of each cluster: its stage's activations from 0 (sram_cap), its
 *   input buffers below the reserved top (pipe_reserved: a flag the
 *   notifies and credits copy, never written, and a 64-byte landing place
 *   per sending cluster, never read).
 * Guarantees: the outputs are those of placement chip (the same lowering,
 *   per instance); every signal is consumed once.
 * Without cluster links the plan is refused (why[] says so): the stages
 *   of placement split's staged schedule go through DRAM instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/backend/stage.h"
#include "compiler/backend/split.h"
#include "compiler/legalize/legalize.h"
#include "isa/regs.h"
#include "isa/timing.h"
#include "util/clock.h"

/* Semaphores beyond the segments' (schedule.h): DATA + buffer, CREDIT +
 * the consumer's index in its stage. */
enum { SEM_DATA = BK_SEMS_SPLIT, SEM_CREDIT = BK_SEMS_SPLIT + 2 };
#define PIPE_MSG 64   /* bytes of a notify or a credit */

/* The reserved top of each cluster's SRAM: the flag, then a landing place per sending cluster. */
static uint64_t pipe_reserved(const AtlChip *chip) { return (uint64_t)PIPE_MSG * ((uint64_t)chip->clusters + 1); }
static uint64_t flag_at(const AtlChip *chip) { return (uint64_t)chip->sram_bytes - pipe_reserved(chip); }
static uint64_t land_at(const AtlChip *chip, int from) { return flag_at(chip) + PIPE_MSG * (uint64_t)(from + 1); }

/* Credit semaphores a core has room for: consumer clusters a stage may have. */
static int credit_room(const AtlChip *chip) { return chip->semaphores - SEM_CREDIT; }

static uint64_t round64(uint64_t v) { return (v + 63) / 64 * 64; }

/* Bytes of tensor t for one instance of m of the batch's B images. */
static uint64_t instance_bytes(const IrGraph *g, const BkOptions *opt, int t, int m, int B)
{
    BkCtx c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.dt = opt->dtype;
    c.es = isa_dtype_size(opt->dtype);
    return round64((uint64_t)ir_numel(&g->t[t]) * (uint64_t)bk_tensor_es(&c, t) * (uint64_t)m / (uint64_t)B);
}

/* Buffers of a boundary of `bytes` in a cluster's SRAM: two when they
 * leave a quarter of the SRAM to the stage's activations, else one when it
 * does, else 0 (the cut cannot be a stage boundary). */
static int boundary_slots(const AtlChip *chip, uint64_t bytes)
{
    uint64_t room = (uint64_t)chip->sram_bytes > pipe_reserved(chip) ? (uint64_t)chip->sram_bytes - pipe_reserved(chip) : 0;
    if (2 * bytes <= room * 3 / 4) return 2;
    return bytes <= room * 3 / 4 ? 1 : 0;
}

/* SRAM offset of stage s's input buffers (s > 0) in its clusters. */
static uint64_t in_base(const AtlChip *chip, uint64_t bytes, int slots)
{
    return (flag_at(chip) - (uint64_t)slots * bytes) / 64 * 64;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* The clusters of K busy at once on average when I instances stream
 * through S stages: each is busy I of the I + S - 1 steps of a pipeline
 * (fill and drain included), so each stage is priced with 1/that of the
 * DRAM bandwidth (placement split prices with 1/K: all its clusters work
 * the whole time). */
static int busy_clusters(int K, int I, int S)
{
    int a = (int)(((uint64_t)K * (uint64_t)I + (uint64_t)(I + S - 1) / 2) / (uint64_t)(I + S - 1));
    return a < 1 ? 1 : a;
}

/* pre[i]: the cycles of the units of g at micro-batch m (the whole graph
 * priced as placement split with `share` clusters sharing the DRAM) that
 * start before node i; uc the units (the caller frees their arrays). */
static int unit_prefix(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int m, int share,
                       BkStageCosts *uc, uint64_t *pre, AtlErr *e)
{
    int B = (int)g->t[g->inputs[0]].dims[0];
    IrGraph inst;
    char why[256];
    uint64_t total;
    int r = bk_split_graph(g, m, &inst, why, sizeof why, e);
    if (r) return r < 0 ? -1 : atl_fail(e, "internal: %s", why);
    BkSplit sp = {B, B / m, share, NULL, 0};
    free(uc->first);
    free(uc->est);
    memset(uc, 0, sizeof *uc);
    r = ops->estimate(&inst, chip, opt, &sp, &total, uc, e);
    ir_free(&inst);
    if (r) return -1;
    memset(pre, 0, ((size_t)g->nn + 2) * sizeof *pre);
    for (int u = 0; u < uc->n; u++)
        if (uc->first[u] < g->nn) pre[uc->first[u] + 1] += uc->est[u];
    for (int i = 1; i <= g->nn; i++) pre[i] += pre[i - 1];
    return 0;
}

/* The pipeline's price: the fill (one instance through every stage) plus
 * the slowest stage's steady state, (instances per cluster - 1) times its
 * cycles, plus the producer's with one buffer (the two cannot overlap). */
static uint64_t pipe_price(const uint64_t *T, const int *n, const int *slots, int S, int I)
{
    uint64_t fill = 0, steady = 0;
    for (int s = 0; s < S; s++) {
        fill += T[s];
        uint64_t per = T[s] + (s && slots[s] == 1 ? T[s - 1] : 0);
        uint64_t st = (ceil_div((uint64_t)I, (uint64_t)n[s]) - 1) * per;
        if (st > steady) steady = st;
    }
    return fill + steady;
}

/* Clusters per stage: one each, then one at a time to the stage whose
 * extra cluster lowers the price most (a stage never has more clusters
 * than instances, nor a consuming stage more than the credit semaphores).
 * Returns the price. */
static uint64_t allocate(const AtlChip *chip, const uint64_t *T, const int *slots, int S, int I, int *n)
{
    int left = chip->clusters - S;
    for (int s = 0; s < S; s++) n[s] = 1;
    uint64_t best = pipe_price(T, n, slots, S, I);
    while (left > 0) {
        int pick = -1;
        uint64_t pick_price = best;
        for (int s = 0; s < S; s++) {
            if (n[s] >= I || (s && n[s] >= credit_room(chip))) continue;
            n[s]++;
            uint64_t p = pipe_price(T, n, slots, S, I);
            n[s]--;
            if (p < pick_price) { pick = s; pick_price = p; }
        }
        if (pick < 0) break;
        n[pick]++;
        left--;
        best = pick_price;
    }
    return best;
}

/* Where instance j of stage s runs: the (j mod clusters)-th cluster of the
 * stage, counted backwards when the stage is reversed (orient). */
static int cluster_of(const BkPipePlan *p, int s, int j)
{
    int k = j % p->clusters[s];
    return p->first[s] + (p->reversed[s] ? p->clusters[s] - 1 - k : k);
}

/* Each stage's clusters in the order (forwards or backwards) that puts
 * its instances fewer links away from their producers, stage after stage
 * (on a ring a snake; on a mesh numbered row by row, a stage below the
 * one before). */
static void orient(const AtlChip *chip, BkPipePlan *p, int I)
{
    for (int s = 1; s < p->n; s++) {
        long hops[2] = {0, 0};
        for (int r = 0; r < 2; r++) {
            p->reversed[s] = r;
            for (int j = 0; j < I; j++) hops[r] += tim_noc_route(chip, cluster_of(p, s - 1, j), cluster_of(p, s, j), NULL);
        }
        p->reversed[s] = hops[1] < hops[0];
    }
}
static int slot_of(const BkPipePlan *p, int s, int j) { return j / p->clusters[s] % p->slots[s]; }

int bk_pipeline_plan(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int m, BkPipePlan *plan,
                     char *why, size_t cap, AtlErr *e)
{
    memset(plan, 0, sizeof *plan);
    int B = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? (int)g->t[g->inputs[0]].dims[0] : 1, K = chip->clusters;
    if (!chip->noc_cluster_links) {
        snprintf(why, cap, "chip %s has no cluster links ([noc] cluster_links = 0): a pipeline hands its stage boundaries "
                 "from cluster to cluster over the NoC (placement split's staged schedule passes them through DRAM)", chip->name);
        return 1;
    }
    if (K < 2) { snprintf(why, cap, "chip %s has one cluster", chip->name); return 1; }
    if (m < 1 || B % m || B / m < 2) { snprintf(why, cap, "batch %d in instances of %d images: fewer than two instances", B, m); return 1; }
    if (credit_room(chip) < 1) {
        snprintf(why, cap, "chip %s has %d semaphores per core; a pipeline needs %d", chip->name, chip->semaphores, SEM_CREDIT + 1);
        return 1;
    }
    if (bk_rewrite_count(g) || bk_rewrite_ops_count(g)) { snprintf(why, cap, "the graph has ops the backend rewrites"); return 1; }
    int I = B / m, rc = -1;
    IrGraph inst;
    int r = bk_split_graph(g, m, &inst, why, cap, e);
    if (r) return r;
    ir_free(&inst);
    BkStageCosts uc;
    memset(&uc, 0, sizeof uc);
    int *cuts = malloc(((size_t)g->nn + 2) * sizeof *cuts);
    uint64_t *pre = calloc((size_t)g->nn + 2, sizeof *pre);
    /* the search prices every unit with all clusters busy; the plan found is priced again below */
    r = cuts && pre ? unit_prefix(ops, g, chip, opt, m, K, &uc, pre, e) : atl_fail(e, "out of memory");
    if (r) goto done;
    int nc = bk_stage_cuts(g, cuts + 1, g->nn);
    if (nc < 0) { atl_fail(e, "out of memory"); goto done; }
    /* candidates: cuts where a unit starts and whose boundary has a buffer; positions 0 and nn close the list */
    int P = 1;
    cuts[0] = 0;
    for (int i = 1; i <= nc; i++) {
        int ok = 0, t = bk_stage_boundary(g, cuts[i]);
        for (int u = 0; u < uc.n && !ok; u++) ok = uc.first[u] == cuts[i];
        if (ok && t >= 0 && boundary_slots(chip, instance_bytes(g, opt, t, m, B))) cuts[P++] = cuts[i];
    }
    cuts[P++] = g->nn;
    int maxS = K < BK_MAX_STAGES ? K : BK_MAX_STAGES;
    if (maxS > P - 1) maxS = P - 1;
    if (maxS < 2) {
        snprintf(why, cap, "no cut of the graph whose boundary tensor fits a buffer in a cluster's SRAM");
        rc = 1;
        goto done;
    }
    /* best[k][i]: the least largest stage over the first i candidates in k stages; from[k][i] its last cut */
    uint64_t (*best)[BK_MAX_STAGES + 1] = NULL;
    int (*from)[BK_MAX_STAGES + 1] = NULL;
    best = malloc((size_t)P * sizeof *best);
    from = malloc((size_t)P * sizeof *from);
    if (!best || !from) { free(best); free(from); atl_fail(e, "out of memory"); goto done; }
    for (int i = 0; i < P; i++)
        for (int k = 0; k <= maxS; k++) { best[i][k] = UINT64_MAX; from[i][k] = -1; }
    best[0][0] = 0;
    for (int k = 1; k <= maxS; k++)
        for (int i = 1; i < P; i++)
            for (int j = 0; j < i; j++) {
                if (best[j][k - 1] == UINT64_MAX) continue;
                uint64_t stage = pre[cuts[i]] - pre[cuts[j]], worst = stage > best[j][k - 1] ? stage : best[j][k - 1];
                if (worst < best[i][k]) { best[i][k] = worst; from[i][k] = j; }
            }
    plan->est = UINT64_MAX;
    for (int S = 2; S <= maxS; S++) {
        if (best[P - 1][S] == UINT64_MAX) continue;
        int pos[BK_MAX_STAGES + 1], slots[BK_MAX_STAGES], n[BK_MAX_STAGES];
        uint64_t T[BK_MAX_STAGES];
        for (int k = S, i = P - 1; k >= 0; k--) { pos[k] = i; i = k ? from[i][k] : i; }
        for (int s = 0; s < S; s++) {
            T[s] = pre[cuts[pos[s + 1]]] - pre[cuts[pos[s]]];
            slots[s] = s ? boundary_slots(chip, instance_bytes(g, opt, bk_stage_boundary(g, cuts[pos[s]]), m, B)) : 0;
        }
        uint64_t price = allocate(chip, T, slots, S, I, n);
        if (price >= plan->est) continue;
        plan->n = S;
        plan->m = m;
        plan->est = price;
        for (int s = 0, c = 0; s < S; s++) {
            plan->start[s] = cuts[pos[s]];
            plan->first[s] = c;
            plan->clusters[s] = n[s];
            plan->slots[s] = slots[s];
            plan->stage_est[s] = T[s];
            c += n[s];
        }
        plan->start[S] = g->nn;
    }
    free(best);
    free(from);
    if (!plan->n) { snprintf(why, cap, "no pipeline of two stages or more"); rc = 1; goto done; }
    orient(chip, plan, I);
    /* the plan's clusters busy at once, on average: its stages priced again with their share of the DRAM */
    int used = plan->first[plan->n - 1] + plan->clusters[plan->n - 1], busy = busy_clusters(used, I, plan->n);
    if (busy != K) {
        if (unit_prefix(ops, g, chip, opt, m, busy, &uc, pre, e)) goto done;
        for (int s = 0; s < plan->n; s++) plan->stage_est[s] = pre[plan->start[s + 1]] - pre[plan->start[s]];
        plan->est = pipe_price(plan->stage_est, plan->clusters, plan->slots, plan->n, I);
    }
    rc = 0;
done:
    free(uc.first);
    free(uc.est);
    free(cuts);
    free(pre);
    return rc;
}

/* Appends a nop waiting on sem to core's DMA stream. */
static int wait_dma(BkEmit *x, int core, int sem, AtlErr *e)
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_NOP;
    in.wait = (uint8_t)(sem + 1);
    return prog_append(&x->prog, core, ISA_ENGINE_DMA, &in, 0, e);
}

/* Appends to core's DMA stream the 64-byte message (a copy of its
 * cluster's flag into its landing place in cluster `to`) that signals sem
 * on every core of `to` once it has landed. */
static int message(BkEmit *x, const AtlChip *chip, int core, int to, int sem, AtlErr *e)
{
    int cpc = chip->cores_per_cluster;
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_COPY;
    in.dtype = ISA_I8;
    in.dst_space = ISA_SPACE_PEER;
    in.dst = isa_peer_addr(to, land_at(chip, core / cpc));
    in.src_space = ISA_SPACE_SRAM;
    in.src = flag_at(chip);
    in.mask = cpc >= 32 ? 0xffffffffu : (1u << cpc) - 1;
    in.signal = (uint8_t)(sem + 1);
    in.shape[0] = in.shape[1] = in.shape[2] = 1;
    in.shape[3] = PIPE_MSG;
    in.dst_stride[3] = in.src_stride[3] = 1;
    return prog_append(&x->prog, core, ISA_ENGINE_DMA, &in, 0, e);
}

/* Emits instance j of I of stage s (built as st, its boundaries of
 * in_bytes / out_bytes per instance) on its cluster: the waits for its
 * input and for the credit of the buffer it writes, its units (segments
 * like those of st's first instance, moved to the cluster), then the
 * notify to the next stage and the credit to the previous one. psched
 * collects the segments (freed by the caller); the stage's first instance
 * records what its units move (the summary's figures) in st's segments. */
static int emit_instance(BkEmit *x, const AtlChip *chip, const BkPipePlan *p, BkStage *st, int s, int j, int I, uint64_t in_bytes,
                         uint64_t out_bytes, BkSchedule *psched, AtlErr *e)
{
    int cpc = chip->cores_per_cluster, cl = cluster_of(p, s, j), last = s == p->n - 1;
    x->nsmove = 0;
    if (s) {   /* the input: this cluster's buffer of the instance */
        uint64_t b = in_base(chip, in_bytes, p->slots[s]);
        x->smove[x->nsmove++] = (BkEmitSramMove){b, b + in_bytes, (uint64_t)slot_of(p, s, j) * in_bytes, -1};
    }
    if (!last) {   /* the output, placed at SRAM size + its offset: the next stage's cluster's buffer */
        uint64_t b = in_base(chip, out_bytes, p->slots[s + 1]), v = (uint64_t)chip->sram_bytes + b;
        uint64_t to = b + (uint64_t)slot_of(p, s + 1, j) * out_bytes;
        x->smove[x->nsmove++] = (BkEmitSramMove){v, v + out_bytes, to - v, cluster_of(p, s + 1, j)};
    }
    /* the buffer it writes held the instance slots x clusters earlier, until its consumer handed it back */
    int credit = !last && j - p->slots[s + 1] * p->clusters[s + 1] >= 0;
    for (int core = cl * cpc; core < (cl + 1) * cpc; core++) {
        if (s && wait_dma(x, core, SEM_DATA + slot_of(p, s, j), e)) return -1;
        if (credit && wait_dma(x, core, SEM_CREDIT + j % p->clusters[s + 1], e)) return -1;
    }
    for (int i = 0; i < st->nunits; i++) {
        BkSegment *s0 = &st->sched.seg[i];
        BkCoreSet set = {cl * cpc + s0->cores.first % cpc, s0->cores.count}, all = {cl * cpc, cpc};
        int k = bk_sched_add(psched, s0->layer, set, all, 0, e);
        if (k < 0) return -1;
        BkSegment *sg = &psched->seg[k];
        sg->bar.scope = ISA_SCOPE_CLUSTER;
        sg->inst = j;
        sg->act_copy = cl;
        if (bk_emit_segment(x, sg, e)) return -1;
        if (j) continue;
        s0->dram_rd = x->use.dram_rd;
        s0->dram_wr = x->use.dram_wr;
        s0->lmem_peak = x->use.lmem_peak;
    }
    if (!last && message(x, chip, cl * cpc, cluster_of(p, s + 1, j), SEM_DATA + slot_of(p, s + 1, j), e)) return -1;
    int next = j + p->slots[s] * p->clusters[s];   /* the next instance in its input buffer, and its producer */
    if (s && next < I && message(x, chip, cl * cpc, cluster_of(p, s - 1, next), SEM_CREDIT + j % p->clusters[s], e)) return -1;
    return 0;
}

int bk_compile_pipeline(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkPipePlan *plan,
                        AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    int B = (int)g->t[g->inputs[0]].dims[0], n = plan->n, m = plan->m, I = B / m, rc = -1, built = 0, layer_base = 0;
    int K = plan->first[n - 1] + plan->clusters[n - 1];   /* the clusters it uses */
    IrGraph sg[BK_MAX_STAGES], ig[BK_MAX_STAGES];
    int have_sg = 0, have_ig = 0;
    uint64_t bytes[BK_MAX_STAGES + 1] = {0};   /* boundary s (into stage s) per instance */
    BkStage *st = calloc((size_t)n, sizeof *st);
    BkSchedule *ps = calloc((size_t)n, sizeof *ps);
    uint64_t *io_fixed = calloc((size_t)g->nt + 1, sizeof *io_fixed);
    uint64_t *io_sram = calloc(((size_t)g->nt + 1) * (size_t)n, sizeof *io_sram);
    BkEmit emit;
    memset(&emit, 0, sizeof emit);
    if (sum) memset(sum, 0, sizeof *sum);
    if (!st || !ps || !io_fixed || !io_sram) { atl_fail(e, "out of memory"); goto done; }
    if (ops->check_options(chip, opt, e)) goto done;
    for (int s = 0; s < n; s++) bk_sched_init(&ps[s]);
    uint64_t io_bytes = bk_stages_io(g, opt, NULL, 0, io_fixed);   /* g's inputs and outputs, whole batch each */
    int bound[BK_MAX_STAGES];
    for (int s = 1; s < n; s++) {
        bound[s] = bk_stage_boundary(g, plan->start[s]);
        if (bound[s] < 0) { atl_fail(e, "internal: pipeline stage %d has no boundary tensor", s); goto done; }
        bytes[s] = instance_bytes(g, opt, bound[s], m, B);
    }
    for (int s = 0; s < n; s++) {
        char why[256];
        uint64_t *sram = io_sram + ((size_t)g->nt + 1) * (size_t)s;
        if (s) sram[bound[s]] = in_base(chip, bytes[s], plan->slots[s]) + 1;
        if (s + 1 < n) sram[bound[s + 1]] = (uint64_t)chip->sram_bytes + in_base(chip, bytes[s + 1], plan->slots[s + 1]) + 1;
        if (bk_stage_graph(g, plan->start[s], plan->start[s + 1], &sg[s], e)) goto done;
        have_sg = s + 1;
        int r = bk_split_graph(&sg[s], m, &ig[s], why, sizeof why, e);
        if (r) { if (r > 0) atl_fail(e, "pipeline stage %d: %s", s, why); goto done; }
        have_ig = s + 1;
        BkSplit sp = {B, I, busy_clusters(K, I, n), sram, s ? in_base(chip, bytes[s], plan->slots[s]) : flag_at(chip)};
        built = s + 1;
        if (ops->build(&st[s], &ig[s], chip, opt, &sp, w, io_fixed, io_bytes, layer_base, e)) goto done;
        layer_base += st[s].nunits;
    }
    /* one stride for every cluster's copy of the DRAM activation region */
    uint64_t act = 0;
    for (int s = 0; s < n; s++)
        if (st[s].c.act_bytes > act) act = st[s].c.act_bytes;
    for (int s = 0; s < n; s++) st[s].c.act_bytes = act;
    double t0 = atl_clock_s();
    if (bk_emit_init(&emit, &st[0].c, e)) goto done;
    for (int s = 0; s < n; s++) {
        if (bk_emit_use_ctx(&emit, &st[s].c, e)) goto done;
        for (int j = 0; j < I; j++)
            if (emit_instance(&emit, chip, plan, &st[s], s, j, I, bytes[s], bytes[s + 1], &ps[s], e)) goto done;
    }
    emit.nsmove = 0;
    if (bk_emit_finish(&emit, e)) goto done;
    int ms[BK_MAX_STAGES];
    for (int s = 0; s < n; s++) ms[s] = m;
    BkStages all = {st, n, B, ms, bound, io_fixed, io_bytes, act * (uint64_t)K};
    uint32_t variant;
    if (bk_stages_variant(ops, g, chip, opt, &all, &emit, &variant, sum, e)) goto done;
    if (sum) {
        uint64_t T[BK_MAX_STAGES];
        for (int s = 0; s < n; s++) {
            /* its rows: one instance on the stage's first cluster */
            int end = s + 1 < n ? sum->stage_row[s + 1] : sum->nlayers;
            for (int i = sum->stage_row[s]; i < end; i++) sum->layers[i].core_first += plan->first[s] * chip->cores_per_cluster;
            T[s] = 0;
            for (int i = 0; i < st[s].nunits; i++) T[s] += st[s].sched.seg[i].est_cycles;
            sum->stage_first_cluster[s] = plan->first[s];
            sum->stage_clusters[s] = plan->clusters[s];
            sum->stage_slots[s] = plan->slots[s];
            sum->stage_est[s] = T[s];
        }
        sum->est_cycles = pipe_price(T, plan->clusters, plan->slots, n, I);
        sum->phase_s[BK_PHASE_EMIT] += atl_clock_s() - t0;
        sum->pipeline = 1;
        sum->instances = I;
        sum->micro_batch = m;
        sum->clusters = K;
    }
    rc = 0;
done:
    bk_emit_free(&emit);
    for (int s = 0; s < n && ps; s++) bk_sched_free(&ps[s]);
    for (int s = 0; s < built; s++) ops->free(&st[s]);
    for (int s = 0; s < have_ig; s++) ir_free(&ig[s]);
    for (int s = 0; s < have_sg; s++) ir_free(&sg[s]);
    free(st);
    free(ps);
    free(io_fixed);
    free(io_sram);
    return rc;
}

int bk_pipeline_choose(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int forced,
                       uint64_t chip_est, uint64_t split_est, AbmWriter *w, BkSummary *sum, char *why, size_t cap, AtlErr *e)
{
    BkPipePlan plan;
    char whynot[256] = "";
    int m = opt->micro_batch ? opt->micro_batch : 1;
    if (forced && opt->keep_activations) return atl_fail(e, "--placement pipeline: --keep-activations keeps every activation in DRAM");
    if (forced && opt->stage_plan) return atl_fail(e, "--placement pipeline: --stage-plan gives the stages of placement split");
    if (!forced && !chip->noc_cluster_links) return 1;   /* nothing to price: no cluster links */
    int r = bk_pipeline_plan(ops, g, chip, opt, m, &plan, whynot, sizeof whynot, e);
    if (r < 0 || (r > 0 && forced)) return r < 0 ? -1 : atl_fail(e, "--placement pipeline: %s", whynot);
    if (!forced) {
        size_t n = strlen(why);
        if (r > 0) {
            snprintf(why + n, cap - n, "%spipeline: %.120s", n ? "; " : "", whynot);
            return 1;
        }
        if (chip_est == UINT64_MAX && ops->estimate(g, chip, opt, NULL, &chip_est, NULL, e)) return -1;
        uint64_t other = chip_est < split_est ? chip_est : split_est;
        if (plan.est >= other) {
            snprintf(why + n, cap - n, "%spipeline at %llu", n ? ", " : "", (unsigned long long)plan.est);
            return 1;
        }
    }
    if (bk_compile_pipeline(ops, g, chip, opt, &plan, w, sum, e)) return -1;
    if (sum && !forced)
        snprintf(sum->placement_why, sizeof sum->placement_why, "the cost model prices it at %llu cycles, chip at %llu, split at %llu",
                 (unsigned long long)plan.est, (unsigned long long)chip_est, (unsigned long long)split_est);
    return 0;
}

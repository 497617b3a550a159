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
 *      layer's core set (group/search.c); graph outputs that folding made
 *      constants become a copy each;
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
#include "compiler/emit/emit.h"
#include "compiler/group/group.h"
#include "compiler/legalize/legalize.h"
#include "compiler/lower/lower.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
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

/* Lowers every layer into layers (count *n), each with its tile shape
 * chosen on all cores of the chip. */
static int lower_all(BkCtx *c, BkLayer *layers, int *n, double *phase, AtlErr *e)
{
    const IrGraph *g = c->g;
    BkCoreSet all = {0, cfg_total_cores(c->chip)};
    c->ncores = all.count;
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? g->nout : g->nn;
        for (int k = 0; k < cnt; k++) {
            int t = pass ? g->outputs[k] : -1;
            if (pass ? !g->t[t].data : !is_layer(c, k)) continue;
            BkLayer *ly = &layers[*n];
            memset(ly, 0, sizeof *ly);
            ly->node = pass ? -1 : k;
            ly->tensor = t;
            ly->layer_id = *n;
            ly->slot_size = c->slot;
            (*n)++;
            double t0 = atl_clock_s();
            int rc = pass ? bk_lower_const_output(c, t, ly, e) : bk_lower_node(c, k, ly, e);
            if (!rc) rc = bk_choose_shape(c, ly, all, e);
            phase[BK_PHASE_LOWER] += atl_clock_s() - t0;
            if (rc) return pass ? atl_err_prefix(e, "graph output '%s'", g->t[t].name) : -1;
        }
    }
    return 0;
}

/* The schedule: the units (layers alone, or their groups with grouping
 * on), one segment each on all cores of the chip, closed by barrier 0;
 * layer ids numbered in execution order. */
static int schedule_all(BkCtx *c, BkLayer *layers, int n, BkLayer *chains, BkSchedule *sched, double *phase, AtlErr *e)
{
    BkCoreSet all = {0, cfg_total_cores(c->chip)};
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
        units[i].ly->layer_id = i;
        bk_chain_mark_internal(c, units[i].ly);
        if (bk_sched_add(sched, units[i].ly, units[i].cores, all, 0, e) < 0) goto done;
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

static int fill_summary(const BkCtx *c, const BkSchedule *sched, const BkEmit *x, int batch, BkSummary *sum, AtlErr *e)
{
    const IrGraph *g = c->g;
    sum->nlayers = sched->n;
    for (int i = 0; i < sched->n; i++) {
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
        snprintf(li->split, sizeof li->split, "%s", ly->split);
        li->macs = ly->macs;
        li->run_macs = ly->run_macs ? ly->run_macs : ly->macs;
        li->est_cycles = sg->est_cycles;
        li->est_compute = sg->est_compute;
        li->est_dma = sg->est_dma;
        li->dram_rd = sg->dram_rd;
        li->dram_wr = sg->dram_wr;
        li->lmem_peak = sg->lmem_peak;
        li->is_matrix = ly->is_matrix;
        sum->est_cycles += sg->est_cycles;
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

static int compile_graph(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    BkOptions dflt;
    if (!opt) { bk_options_default(&dflt); opt = &dflt; }
    if (sum) memset(sum, 0, sizeof *sum);
    if (opt->group != BK_GROUP_AUTO && opt->group != BK_GROUP_NONE)
        return atl_fail(e, "backend: group mode %d is not one of auto, none", opt->group);
    if (opt->sram_input < BK_SRAM_AUTO || opt->sram_input > BK_SRAM_ALWAYS)
        return atl_fail(e, "backend: SRAM input mode %d is not one of auto, never, always", opt->sram_input);
    if (opt->dtype != ISA_F32 && opt->dtype != ISA_F16 && opt->dtype != ISA_BF16)
        return atl_fail(e, "backend: dtype %s is not supported (f32, f16, bf16)", isa_dtype_name(opt->dtype));
    if (chip->semaphores < BK_SEMS_USED)
        return atl_fail(e, "backend: the chip has %d semaphores per core; the pipeline needs %d", chip->semaphores, BK_SEMS_USED);
    BkCtx c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.chip = chip;
    c.w = w;
    c.dt = opt->dtype;
    c.es = isa_dtype_size(c.dt);
    c.ncores = cfg_total_cores(chip);
    c.keep_activations = opt->keep_activations;
    /* keeping every activation for comparison keeps every layer on its own */
    c.grouping = opt->group != BK_GROUP_NONE && !opt->keep_activations;
    c.group_max = opt->group_max;
    c.sram_never = opt->sram_input == BK_SRAM_NEVER;
    c.sram_always = opt->sram_input == BK_SRAM_ALWAYS;
    uint64_t row = (uint64_t)chip->lmem_banks * chip->lmem_bank_width;
    c.slot = (uint64_t)chip->lmem_bytes / 2 / row * row;
    if (c.slot == 0) c.slot = (uint64_t)chip->lmem_bytes / 2;
    c.align = (uint64_t)(chip->lmem_alignment > chip->lmem_bank_width ? chip->lmem_alignment : chip->lmem_bank_width);
    int rc = -1, nlayers = 0;
    BkSchedule sched;
    bk_sched_init(&sched);
    BkEmit emit;
    memset(&emit, 0, sizeof emit);
    c.pl = calloc((size_t)g->nt + 1, sizeof *c.pl);
    c.skip = calloc((size_t)g->nn + 1, sizeof *c.skip);
    c.gelu_src = malloc(((size_t)g->nn + 1) * sizeof *c.gelu_src);
    c.act_on = calloc((size_t)g->nn + 1, sizeof *c.act_on);
    c.tail = malloc(((size_t)g->nn + 1) * sizeof *c.tail);
    BkLayer *layers = calloc((size_t)g->nn + (size_t)g->nout + 1, sizeof *layers);
    BkLayer *chains = calloc((size_t)g->nn + (size_t)g->nout + 1, sizeof *chains);
    if (!c.pl || !c.skip || !c.gelu_src || !c.act_on || !c.tail || !layers || !chains) { atl_fail(e, "out of memory"); goto done; }
    for (int t = 0; t < g->nt; t++) c.pl[t].root = t;
    for (int i = 0; i < g->nn; i++) c.gelu_src[i] = c.tail[i] = -1;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? g->nout : g->nin); i++) {
            const IrTensor *x = &g->t[pass ? g->outputs[i] : g->inputs[i]];
            if (bk_tensor_dt(&c, pass ? g->outputs[i] : g->inputs[i]) < 0) {
                atl_fail(e, "graph %s '%s' has dtype %s, which the chip cannot hold (it has no 64-bit integers; "
                         "see docs/backend.md, Data types)", pass ? "output" : "input", x->name, ir_dtype_name(x->dtype));
                goto done;
            }
            if (!pass && !ir_shape_known(x)) { atl_fail(e, "graph input '%s' has an unknown shape (use --input-shape)", x->name); goto done; }
        }
    double phase[BK_NPHASES] = {0}, t0 = atl_clock_s();
    if (bk_match_patterns(&c, e) || bk_place(&c, e) || bk_check_limits(&c, e)) goto done;
    phase[BK_PHASE_ADDRESS] += atl_clock_s() - t0;
    if (lower_all(&c, layers, &nlayers, phase, e) || schedule_all(&c, layers, nlayers, chains, &sched, phase, e)) goto done;
    t0 = atl_clock_s();
    for (int i = 0; i < sched.n; i++)
        if (bk_cost_segment(&c, &sched.seg[i], UINT64_MAX, e) < 0) goto done;
    phase[BK_PHASE_COST] += atl_clock_s() - t0;
    t0 = atl_clock_s();
    if (bk_emit_init(&emit, &c, e)) goto done;
    for (int i = 0; i < sched.n; i++) {
        const BkLayer *ly = sched.seg[i].layer;
        if (bk_emit_segment(&emit, &sched.seg[i], e)) {
            if (ly->node < 0) atl_err_prefix(e, "graph output '%s'", g->t[ly->tensor].name);
            goto done;
        }
        sched.seg[i].dram_rd = emit.use.dram_rd;
        sched.seg[i].dram_wr = emit.use.dram_wr;
        sched.seg[i].lmem_peak = emit.use.lmem_peak;
    }
    if (bk_emit_finish(&emit, e)) goto done;
    char name[128];
    snprintf(name, sizeof name, "%s", opt->net_name ? opt->net_name : (g->name && g->name[0] ? g->name : "net"));
    int batch = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? (int)g->t[g->inputs[0]].dims[0] : 1;
    uint32_t variant;
    if (bk_emit_abm(&emit, name, batch, opt->options_text, opt->source_hash, &variant, e)) goto done;
    phase[BK_PHASE_EMIT] += atl_clock_s() - t0;
    if (sum) {
        memcpy(sum->phase_s, phase, sizeof phase);
        sum->layers = calloc((size_t)(sched.n ? sched.n : 1), sizeof *sum->layers);
        if (!sum->layers) { atl_fail(e, "out of memory"); goto done; }
        if (fill_summary(&c, &sched, &emit, batch, sum, e)) goto done;
    }
    rc = 0;
done:
    bk_emit_free(&emit);
    bk_sched_free(&sched);
    for (int i = 0; layers && i < nlayers; i++) bk_layer_free(&layers[i]);
    for (int i = 0; chains && i < nlayers; i++) bk_layer_free(&chains[i]);
    free(layers);
    free(chains);
    free(c.pl); free(c.skip); free(c.gelu_src); free(c.act_on); free(c.tail);
    return rc;
}

/* Graphs with ops the backend rewrites (bk_rewrite_*.c) are compiled
 * from a rewritten private copy; the caller's graph stays as it was. */
int bk_compile(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    if (!bk_rewrite_count(g) && !bk_rewrite_ops_count(g)) return compile_graph(g, chip, opt, w, sum, e);
    IrGraph copy;
    if (ir_clone(g, &copy, e)) return -1;
    /* shapes are inferred before bk_rewrite_ops: its rules read them (a
     * 3-D ConvTranspose becomes a 3-D Conv that legalize/rewrite_3d.c splits) */
    int rc = bk_rewrite_convtranspose(&copy, e) || bk_rewrite_rnn(&copy, e) || ir_toposort(&copy, e) ||
             ir_infer_shapes(&copy, e) || bk_rewrite_ops(&copy, e) || ir_toposort(&copy, e) || ir_infer_shapes(&copy, e) ||
             pass_mark_views(&copy, e) ? -1 : compile_graph(&copy, chip, opt, w, sum, e);
    ir_free(&copy);
    return rc;
}

/* bk_compile.c - the backend driver and the .abm output.
 *
 * Reads: a canonicalised graph (compiler/passes.h), the chip, options.
 * Does, in order: on a private copy when the graph has ConvTranspose
 *   nodes, their rewrite into Reshape/Pad/Conv (bk_rewrite_convt.c),
 *   RNN/GRU/LSTM nodes, their unrolling (bk_rewrite_rnn.c), and ops
 *   run as other ops (bk_rewrite_ops.c, bk_rewrite_3d.c), then
 *   re-inference; pattern absorption (bk_pattern.c), DRAM placement
 *   (bk_place.c), one group schedule per remaining node in graph order
 *   (bk_lower_*.c, each tile shape priced by bk_cost.c), the pipeline
 *   emitter (bk_emit.c), then the writer: net, stage (batch = dim 0 of the
 *   first input), tensors (io: inputs/outputs with their storage dtype
 *   (bk_dtype.c: floats in --dtype, integers and bools as int8/16/32),
 *   NCHW/row-major layout and shape; weights and activations are not listed: the streams
 *   address them), streams encoded with isa_encode, the memory plan and
 *   metadata. Views (except the copies placement asks for: a graph output
 *   that is a view of a graph input), absorbed nodes and shape-only nodes
 *   emit nothing.
 * Guarantees: on success the stage runs on any chip with this chip's
 *   fingerprint; on failure the writer may hold a partial net and the
 *   message names the node and op. The summary carries the wall time of
 *   each backend phase (bk_phase_names) for `atoll compile --time`. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/bk_int.h"
#include "compiler/infer.h"
#include "compiler/passes.h"
#include "util/clock.h"

void bk_options_default(BkOptions *o)
{
    memset(o, 0, sizeof *o);
    o->dtype = ISA_F32;
}

void bk_summary_free(BkSummary *s)
{
    if (!s) return;
    free(s->layers);
    memset(s, 0, sizeof *s);
}

static const char *const elem_ops[] = {
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Exp",
    "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "HardSigmoid", "HardSwish", "Gelu", "BatchNormalization",
    "Identity", "PRelu", "Elu", "Celu", "Selu", "Softplus", "Softsign", "Shrink",
    "ThresholdedRelu", "Sum", "Mean", NULL};
static const char *const reduce_ops[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "GlobalAveragePool",
                                         "GlobalMaxPool", "ReduceSumSquare", "ReduceL1", "ReduceL2",
                                         "ReduceLogSum", "ReduceLogSumExp", "ReduceProd", NULL};
static const char *const move_ops[] = {"Transpose", "Concat", "Slice", "Split", "Gather", "Pad", "Expand", "Resize",
                                       "Upsample", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Dropout",
                                       "Tile", "DepthToSpace", "SpaceToDepth", NULL};

static int in_list(const char *op, const char *const *l)
{
    for (int i = 0; l[i]; i++) if (!strcmp(op, l[i])) return 1;
    return 0;
}

/* Index-producing and index-consuming ops: their tensors mix integer and
 * float dtypes, so each of these lowerings checks its own. */
static const struct { const char *op; int (*lower)(BkCtx *, int, BkGroup *, AtlErr *); } index_ops[] = {
    {"ArgMax", bk_lower_arg}, {"ArgMin", bk_lower_arg}, {"Hardmax", bk_lower_arg}, {"TopK", bk_lower_topk},
    {"NegativeLogLikelihoodLoss", bk_lower_loss}, {"SoftmaxCrossEntropyLoss", bk_lower_loss},
    {"Trilu", bk_lower_trilu}, {"OneHot", bk_lower_onehot}, {"GatherElements", bk_lower_gather_elements},
    {"GatherND", bk_lower_gather_nd}, {"ScatterElements", bk_lower_gather_elements},
    {"Scatter", bk_lower_gather_elements}, {"ScatterND", bk_lower_gather_nd}, {"ReverseSequence", bk_lower_revseq},
};

int bk_lower_node(BkCtx *c, int node, BkGroup *g, AtlErr *e)
{
    const IrNode *n = &c->g->nodes[node];
    if (bk_is_quant_op(n->op)) return bk_lower_quant(c, node, g, e);   /* integer and float tensors by design */
    for (size_t i = 0; i < sizeof index_ops / sizeof index_ops[0]; i++)
        if (!strcmp(n->op, index_ops[i].op)) return index_ops[i].lower(c, node, g, e);
    if (bk_check_dtypes(c, node, e)) return -1;
    if (c->gelu_src[node] >= 0) return bk_lower_elem(c, node, g, e);
    if (!strcmp(n->op, "Cast") || !strcmp(n->op, "CastLike")) return bk_lower_cast(c, node, g, e);
    if (!strcmp(n->op, "Conv")) return bk_lower_conv(c, node, g, e);
    if (!strcmp(n->op, "MaxPool") || !strcmp(n->op, "AveragePool")) return bk_lower_pool(c, node, g, e);
    if (!strcmp(n->op, "Gemm") || !strcmp(n->op, "MatMul")) return bk_lower_mm(c, node, g, e);
    if (!strcmp(n->op, "Softmax") || !strcmp(n->op, "LogSoftmax")) return bk_lower_softmax(c, node, g, e);
    if (!strcmp(n->op, "LayerNormalization")) return bk_lower_layernorm(c, node, g, e);
    if (in_list(n->op, elem_ops) || bk_elem_has_program(c->g, n)) return bk_lower_elem(c, node, g, e);
    if (in_list(n->op, reduce_ops)) return bk_lower_reduce(c, node, g, e);
    if (in_list(n->op, move_ops)) return bk_lower_move(c, node, g, e);
    return bk_fail(c, node, e, "no lowering for this op on the Atoll chip");
}

static int encode_streams(BkCtx *c, uint32_t stage, AtlErr *e)
{
    for (int core = 0; core < c->ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            AtlStream *s = prog_stream(&c->prog, core, eng);
            uint8_t *buf = malloc((size_t)(s->count ? s->count : 1) * ISA_INSN_BYTES);
            if (!buf) return atl_fail(e, "out of memory encoding streams");
            for (int i = 0; i < s->count; i++)
                if (isa_encode(&s->insns[i], buf + (size_t)i * ISA_INSN_BYTES, e)) {
                    free(buf);
                    return atl_err_prefix(e, "core %d %s instruction %d (layer %d)", core, isa_engine_name(eng), i,
                                          s->insns[i].layer);
                }
            int rc = abm_set_stream(c->w, stage, (uint32_t)core, (uint32_t)eng, buf, (size_t)s->count * ISA_INSN_BYTES, e);
            free(buf);
            if (rc) return -1;
        }
    return 0;
}

static int add_io_tensors(BkCtx *c, uint32_t stage, AtlErr *e)
{
    const IrGraph *g = c->g;
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? g->nout : g->nin;
        for (int k = 0; k < cnt; k++) {
            int t = pass ? g->outputs[k] : g->inputs[k];
            const IrTensor *x = &g->t[t];
            if (x->ndim > ABM_MAX_DIMS) return atl_fail(e, "graph %s '%s' has rank %d (at most %d)", pass ? "output" : "input", x->name, x->ndim, ABM_MAX_DIMS);
            AbmTensorDesc d;
            memset(&d, 0, sizeof d);
            d.name = x->name;
            d.dtype = bk_abm_dtype(bk_tensor_dt(c, t));
            d.role = pass ? ABM_ROLE_OUTPUT : ABM_ROLE_INPUT;
            d.region = ABM_REGION_IO;
            d.layout = x->ndim == 4 ? ABM_LAYOUT_NCHW : ABM_LAYOUT_ROW_MAJOR;
            d.ndim = (uint32_t)x->ndim;
            for (int i = 0; i < x->ndim; i++) d.dims[i] = (uint32_t)x->dims[i];
            uint64_t addr = bk_tensor_addr(c, t);
            d.offset = addr & 0xffffffffu;
            uint32_t idx;
            if (abm_add_tensor(c->w, stage, &d, &idx, e)) return atl_err_prefix(e, "tensor '%s'", x->name);
        }
    }
    /* activations (and views of them); not tensors a fused activation
     * overwrote in place, nor ones never materialised */
    for (int t = 0; t < g->nt; t++) {
        const IrTensor *x = &g->t[t];
        if (x->data || x->is_input || x->is_output || x->ndim < 0 || x->ndim > ABM_MAX_DIMS) continue;
        if (c->pl[t].root != t && !x->is_view) continue;
        int r = t;
        for (int k = 0; k < g->nt && c->pl[r].root != r; k++) r = c->pl[r].root;
        if (!c->pl[r].placed || c->pl[r].region != ABM_REGION_ACTIVATIONS) continue;
        AbmTensorDesc d;
        memset(&d, 0, sizeof d);
        d.name = x->name;
        int dt = bk_tensor_dt(c, t);
        if (dt < 0) continue;   /* never stored: no lowering writes such a tensor */
        d.dtype = bk_abm_dtype(dt);
        d.role = ABM_ROLE_ACTIVATION;
        d.region = ABM_REGION_ACTIVATIONS;
        d.layout = x->ndim == 4 ? ABM_LAYOUT_NCHW : ABM_LAYOUT_ROW_MAJOR;
        d.ndim = (uint32_t)x->ndim;
        for (int i = 0; i < x->ndim; i++) d.dims[i] = (uint32_t)x->dims[i];
        d.offset = c->pl[r].offset;
        uint32_t idx;
        if (abm_add_tensor(c->w, stage, &d, &idx, e)) return atl_err_prefix(e, "tensor '%s'", x->name);
    }
    return 0;
}

const char *const bk_phase_names[BK_NPHASES] = {"address assignment", "lowering+tile search", "emit"};

static int compile_graph(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, AbmWriter *w, BkSummary *sum, AtlErr *e)
{
    BkOptions dflt;
    if (!opt) { bk_options_default(&dflt); opt = &dflt; }
    if (sum) memset(sum, 0, sizeof *sum);
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
    uint64_t row = (uint64_t)chip->lmem_banks * chip->lmem_bank_width;
    c.slot = (uint64_t)chip->lmem_bytes / 2 / row * row;
    if (c.slot == 0) c.slot = (uint64_t)chip->lmem_bytes / 2;
    c.align = (uint64_t)(chip->lmem_alignment > chip->lmem_bank_width ? chip->lmem_alignment : chip->lmem_bank_width);
    int rc = -1;
    c.pl = calloc((size_t)g->nt + 1, sizeof *c.pl);
    c.skip = calloc((size_t)g->nn + 1, sizeof *c.skip);
    c.gelu_src = malloc(((size_t)g->nn + 1) * sizeof *c.gelu_src);
    c.act_on = calloc((size_t)g->nn + 1, sizeof *c.act_on);
    c.groups = calloc((size_t)g->nn + (size_t)g->nout + 1, sizeof *c.groups);
    if (!c.pl || !c.skip || !c.gelu_src || !c.act_on || !c.groups) { atl_fail(e, "out of memory"); goto done; }
    for (int t = 0; t < g->nt; t++) c.pl[t].root = t;
    for (int i = 0; i < g->nn; i++) c.gelu_src[i] = -1;
    if (prog_init(&c.prog, c.ncores, e)) goto done;
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
    double phase[BK_NPHASES] = {0}, t0 = atl_clock_s(), t1;
    if (bk_match_patterns(&c, e) || bk_place(&c, e) || bk_check_limits(&c, e)) goto done;
    t1 = atl_clock_s();
    phase[BK_PHASE_ADDRESS] += t1 - t0;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || c.skip[i]) continue;
        /* a view emits nothing unless placement gave it its own storage */
        if (n->nout >= 1 && n->out[0] >= 0 && g->t[n->out[0]].is_view && c.pl[n->out[0]].root != n->out[0]) continue;
        if (n->nout >= 1 && n->out[0] >= 0 && g->t[n->out[0]].data) continue;
        BkGroup *gr = &c.groups[c.ngroups];
        memset(gr, 0, sizeof *gr);
        gr->node = i;
        gr->layer_id = c.ngroups;
        gr->slot_off = 0;
        gr->slot_size = c.slot;
        c.ngroups++;
        t0 = atl_clock_s();
        if (bk_lower_node(&c, i, gr, e)) goto done;
        t1 = atl_clock_s();
        phase[BK_PHASE_LOWER] += t1 - t0;
        if (bk_emit_group(&c, gr, e)) goto done;
        phase[BK_PHASE_EMIT] += atl_clock_s() - t1;
    }
    /* graph outputs that folding turned into constants are copied into place */
    for (int k = 0; k < g->nout; k++) {
        int t = g->outputs[k];
        if (!g->t[t].data) continue;
        BkGroup *gr = &c.groups[c.ngroups];
        memset(gr, 0, sizeof *gr);
        gr->node = -1;
        gr->tensor = t;
        gr->layer_id = c.ngroups;
        gr->slot_size = c.slot;
        c.ngroups++;
        t0 = atl_clock_s();
        if (bk_lower_const_output(&c, t, gr, e)) { atl_err_prefix(e, "graph output '%s'", g->t[t].name); goto done; }
        t1 = atl_clock_s();
        phase[BK_PHASE_LOWER] += t1 - t0;
        if (bk_emit_group(&c, gr, e)) { atl_err_prefix(e, "graph output '%s'", g->t[t].name); goto done; }
        phase[BK_PHASE_EMIT] += atl_clock_s() - t1;
    }
    t0 = atl_clock_s();
    if (bk_emit_finish(&c, e)) goto done;
    uint32_t net, stage;
    char name[128];
    snprintf(name, sizeof name, "%s", opt->net_name ? opt->net_name : (g->name && g->name[0] ? g->name : "net"));
    int batch = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? (int)g->t[g->inputs[0]].dims[0] : 1;
    /* a net of that name already in w gets one more stage (another batch size) */
    if (abm_writer_find_net(w, name, &net) && abm_add_net(w, name, &net, e)) goto done;
    if (abm_add_stage(w, net, (uint32_t)batch, (uint32_t)c.ncores, &stage, e)) goto done;
    if (add_io_tensors(&c, stage, e) || encode_streams(&c, stage, e)) goto done;
    if (abm_set_mem_plan(w, stage, c.act_bytes ? c.act_bytes : 64, c.io_bytes ? c.io_bytes : 64, e)) goto done;
    if (!abm_writer_has_metadata(w)) {
        uint8_t zero[ABM_HASH_BYTES] = {0};
        if (abm_set_metadata(w, "atoll " ATOLL_VERSION, opt->options_text ? opt->options_text : "",
                             opt->source_hash ? opt->source_hash : zero, e)) goto done;
    }
    phase[BK_PHASE_EMIT] += atl_clock_s() - t0;
    if (sum) {
        memcpy(sum->phase_s, phase, sizeof phase);
        sum->layers = calloc((size_t)(c.ngroups ? c.ngroups : 1), sizeof *sum->layers);
        if (!sum->layers) { atl_fail(e, "out of memory"); goto done; }
        sum->nlayers = c.ngroups;
        for (int i = 0; i < c.ngroups; i++) {
            const BkGroup *gr = &c.groups[i];
            BkLayerInfo *li = &sum->layers[i];
            if (gr->node < 0) {
                snprintf(li->name, sizeof li->name, "%s", g->t[gr->tensor].name);
                snprintf(li->op, sizeof li->op, "Constant");
            } else {
                const IrNode *n = &g->nodes[gr->node];
                snprintf(li->name, sizeof li->name, "%s", n->name ? n->name : "");
                snprintf(li->op, sizeof li->op, "%s%s%s", c.gelu_src[gr->node] >= 0 ? "Gelu" : n->op,
                         c.act_on[gr->node] ? "+" : "", c.act_on[gr->node] ? n->act : "");
            }
            li->layer_id = gr->layer_id;
            li->tiles = gr->ntiles;
            li->cores = gr->cores_used;
            snprintf(li->split, sizeof li->split, "%s", gr->split);
            li->macs = gr->macs;
            li->est_cycles = gr->est_cycles;
            li->est_compute = gr->est_compute;
            li->est_dma = gr->est_dma;
            li->is_matrix = gr->is_matrix;
            sum->est_cycles += gr->est_cycles;
        }
        sum->weight_bytes = c.weight_bytes;
        sum->act_peak = c.act_bytes;
        sum->act_sum = c.act_sum;
        sum->io_bytes = c.io_bytes;
        sum->batch = batch;
        sum->cores = c.ncores;
        for (int k = 0; k < c.ncores * ISA_NUM_ENGINES; k++) sum->insns += (uint64_t)c.prog.streams[k].count;
    }
    rc = 0;
done:
    if (c.groups) for (int i = 0; i < c.ngroups; i++) { bk_group_free(&c.groups[i]); }
    free(c.groups);
    free(c.pl); free(c.skip); free(c.gelu_src); free(c.act_on);
    prog_free(&c.prog);
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
     * 3-D ConvTranspose becomes a 3-D Conv that bk_rewrite_3d.c splits) */
    int rc = bk_rewrite_convtranspose(&copy, e) || bk_rewrite_rnn(&copy, e) || ir_toposort(&copy, e) ||
             ir_infer_shapes(&copy, e) || bk_rewrite_ops(&copy, e) || ir_toposort(&copy, e) || ir_infer_shapes(&copy, e) ||
             pass_mark_views(&copy, e) ? -1 : compile_graph(&copy, chip, opt, w, sum, e);
    ir_free(&copy);
    return rc;
}

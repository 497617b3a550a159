/* chip_conform.c - ONNX conformance on the simulated chip, through the
 * host API as an application runs a model (see chip_conform.h).
 * The backend compiles static shapes: a graph input that only feeds a
 * shape parameter (Resize roi/scales/sizes, Upsample scales, Pad pads/
 * value/axes, Reduce* axes, Reshape/Expand shape, Squeeze/Unsqueeze axes,
 * Slice starts/ends/axes/steps, Split split, Tile repeats, Trilu k,
 * ConstantOfShape shape, Range start/limit/delta, the window ops' size,
 * OneHot depth/values, TopK k, CumSum axis) or a quantisation scale /
 * zero point (QuantizeLinear, DequantizeLinear, MatMulInteger,
 * QLinearMatMul, ConvInteger, QLinearConv) is frozen to
 * the test's value before compiling, as a
 * deployment would bake it into the model; the other inputs are fed at run
 * time. */
#include "tools/chip_conform.h"
#include "tools/chip_exec.h"
#include "tools/chip_convert.h"
#include "tools/chip_limits.h"
#include "compiler/onnx/onnx.h"
#include "compiler/passes/passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ops whose inputs from `first` on only set shapes or static parameters
 * (the backend compiles static shapes, and a deployed model bakes them in). */
static const struct { const char *op; int first; } shape_inputs[] = {
    {"Resize", 1}, {"Upsample", 1}, {"Pad", 1},
    {"ReduceSum", 1}, {"ReduceMean", 1}, {"ReduceMax", 1}, {"ReduceMin", 1}, {"ReduceProd", 1},
    {"ReduceSumSquare", 1}, {"ReduceL1", 1}, {"ReduceL2", 1}, {"ReduceLogSum", 1}, {"ReduceLogSumExp", 1},
    {"Reshape", 1}, {"Expand", 1}, {"Squeeze", 1}, {"Unsqueeze", 1}, {"Slice", 1}, {"Split", 1}, {"Tile", 1},
    {"Trilu", 1}, {"ConstantOfShape", 0}, {"Range", 0}, {"HannWindow", 0}, {"HammingWindow", 0},
    {"BlackmanWindow", 0}, {"OneHot", 1}, {"TopK", 1}, {"CumSum", 1},
};

/* Quantised ops: the inputs (bit k = input k) holding scales and zero
 * points, constants in a deployed quantised model (the chip compiles
 * them in, compiler/lower/quant.c). */
static const struct { const char *op; unsigned mask; } quant_params[] = {
    {"QuantizeLinear", 0x6}, {"DequantizeLinear", 0x6}, {"MatMulInteger", 0xc}, {"QLinearMatMul", 0xf6},
    {"ConvInteger", 0xc}, {"QLinearConv", 0xf6},
};

/* Input k of node n sets a shape (see shape_inputs) or is a quantisation
 * parameter (quant_params). */
static int shape_parameter(const IrNode *n, int k)
{
    for (size_t i = 0; i < sizeof quant_params / sizeof *quant_params; i++)
        if (!strcmp(n->op, quant_params[i].op)) return k < 32 && (quant_params[i].mask >> k & 1);
    for (size_t i = 0; i < sizeof shape_inputs / sizeof *shape_inputs; i++)
        if (!strcmp(n->op, shape_inputs[i].op)) return k >= shape_inputs[i].first;
    return 0;
}

/* 1 when every use of tensor t is a shape parameter of its consumer. */
static int only_shape_parameter(const IrGraph *g, int t)
{
    return !g->t[t].is_output && ir_uses_where(g, t, shape_parameter) > 0;
}

/* *out = g with its shape-parameter inputs made constants (values from
 * `inputs`, by name) and the passes run again; *frozen = how many. */
static int freeze_shape_inputs(const IrGraph *g, const IrTensor *inputs, int ninputs, IrGraph *out, int *frozen, AtlErr *e)
{
    *frozen = 0;
    ir_init(out);
    PbBuf pb = {0};
    if (onnx_save_buffer(g, &pb, e)) return -1;
    int rc = onnx_load_buffer(pb.p, pb.n, "frozen", out, e);
    pb_free(&pb);
    if (rc) return -1;
    for (int i = 0; i < out->nin;) {
        int t = out->inputs[i];
        const IrTensor *v = NULL;
        for (int k = 0; k < ninputs && !v; k++) if (!strcmp(inputs[k].name, out->t[t].name)) v = &inputs[k];
        if (!v || !only_shape_parameter(out, t)) { i++; continue; }
        IrTensor *x = &out->t[t];
        x->dtype = v->dtype;
        x->ndim = v->ndim;
        memcpy(x->dims, v->dims, sizeof x->dims);
        if (ir_alloc_data(x, e)) return -1;
        memcpy(x->data, v->data, ir_nbytes(v));
        x->is_input = 0;
        memmove(&out->inputs[i], &out->inputs[i + 1], (size_t)(out->nin - i - 1) * sizeof *out->inputs);
        out->nin--;
        (*frozen)++;
    }
    return pass_run_all(out, e);
}

/* Inputs converted to the dtype the compiled model takes (an integer
 * that does not fit the chip's integer is an error naming it). */
static int convert_inputs(const HostExec *h, const IrTensor *in, int n, IrTensor *out, AtlErr *e)
{
    for (int i = 0; i < n; i++) {
        int dt = host_exec_input_dtype(h, in[i].name);
        if (chip_convert_input(&in[i], dt ? dt : in[i].dtype, &out[i], e)) return -1;
    }
    return 0;
}

static int run_on_chip(void *ctx, const IrGraph *g, const IrTensor *inputs, int ninputs, IrTensor **outputs, AtlErr *e)
{
    ChipConform *cc = ctx;
    uint8_t *abm = NULL;
    size_t len = 0;
    HostExec h;
    IrTensor *conv = NULL, *res = NULL;
    int rc = -1, nres = 0;
    IrGraph fz;
    int frozen = 0;
    memset(&h, 0, sizeof h);
    *outputs = NULL;
    if (freeze_shape_inputs(g, inputs, ninputs, &fz, &frozen, e)) {
        ir_free(&fz);
        return atl_err_prefix(e, "freezing shape inputs");
    }
    int crc = chip_limit_check_graph(frozen ? &fz : g, e) ? -1 : chip_compile_graph(frozen ? &fz : g, cc->chip, NULL, 0, &abm, &len, NULL, e);
    /* the inputs still fed at run time, in the frozen graph's order */
    IrTensor *fed = calloc((size_t)ninputs + 1, sizeof *fed);
    int nfed = 0;
    for (int i = 0; fed && i < fz.nin; i++)
        for (int k = 0; k < ninputs; k++)
            if (!strcmp(inputs[k].name, fz.t[fz.inputs[i]].name)) fed[nfed++] = inputs[k];
    ir_free(&fz);
    if (!fed) { free(abm); return atl_fail(e, "out of memory"); }
    if (crc) {
        free(fed);
        return chip_limit_classify("compiling", e);
    }
    inputs = fed;
    ninputs = nfed;
    if (host_exec_open(&h, cc->chip, abm, len, NULL, e)) goto out;
    conv = calloc((size_t)ninputs + 1, sizeof *conv);
    res = calloc((size_t)g->nout + 1, sizeof *res);
    if (!conv || !res) { atl_fail(e, "out of memory"); goto out; }
    if (convert_inputs(&h, inputs, ninputs, conv, e)) { rc = chip_limit_classify("converting the inputs", e); goto out; }
    if (host_exec_run(&h, conv, ninputs, e)) goto out;
    for (; nres < g->nout; nres++) {
        IrTensor got;
        if (host_exec_output(&h, g->t[g->outputs[nres]].name, &got, e)) goto out;
        res[nres] = got;
        /* back to the model's dtype, as an application would read it */
        if (chip_convert_output(&res[nres], g->t[g->outputs[nres]].dtype, e)) { nres++; goto out; }
    }
    *outputs = res;
    res = NULL;
    rc = 0;
out:
    if (res) {
        for (int i = 0; i < nres; i++) ir_tensor_free_contents(&res[i]);
        free(res);
    }
    if (conv) {
        for (int i = 0; i < ninputs; i++) ir_tensor_free_contents(&conv[i]);
        free(conv);
    }
    host_exec_close(&h);
    free(abm);
    free(fed);
    return rc;
}

/* The limits table with how many tests each refused. */
static void limits_notes(void *ctx, const ConfResult *r, FILE *fp)
{
    (void)ctx;
    const char **reasons = calloc((size_t)r->n + 1, sizeof *reasons);
    int n = 0;
    for (int i = 0; reasons && i < r->n; i++)
        if (r->cases[i].status == CONF_UNSUPPORTED) reasons[n++] = r->cases[i].reason;
    fprintf(fp, "\n## Chip limits\n\nA test the interpreter passes counts as unsupported on the chip only when it is refused "
                "for one of these limits (the refusal's message has one of the shapes listed in `tools/chip_limits.c`); "
                "any other compile or input error fails the test.\n\n");
    chip_limits_markdown(fp, reasons, n);
    free(reasons);
}

void chip_conform_init(ChipConform *cc, const AtlChip *chip, const char *chip_path, const char *markdown)
{
    memset(cc, 0, sizeof *cc);
    cc->chip = chip;
    cc->chip_path = chip_path;
    snprintf(cc->command, sizeof cc->command, "atoll conformance --chip %s --markdown %s", chip_path,
             markdown ? markdown : "FILE");
    cc->runner.run = run_on_chip;
    cc->runner.notes = limits_notes;
    cc->runner.ctx = cc;
    cc->runner.title = "ONNX conformance on the simulated chip";
    cc->runner.how =
        "Every test directory of the ONNX backend test suites (libonnx-testdata 1.12) that passes on the "
        "reference interpreter is canonicalised, compiled by the backend (fp32) for the chip and run through "
        "the host API (include/atoll.h: device, firmware LOAD/RUN, simulator); graph inputs that only feed shape "
        "or static parameters (Resize roi/scales/sizes, Upsample scales, Pad pads/value/axes, Reduce* axes, "
        "Reshape and Expand shape, Squeeze/Unsqueeze axes, Slice starts/ends/axes/steps, Split split, Tile "
        "repeats, Trilu k, ConstantOfShape shape, Range bounds, the window ops' size, OneHot depth/values, TopK k, "
        "CumSum axis, the scales and zero points of the quantised ops) are frozen to the test's "
        "values before compiling (the chip compiles static shapes, and a deployed model bakes these in); "
        "integer, bool and float64 inputs are converted to the chip's storage types by the host (an int64 "
        "beyond int32 or a float64 beyond float32 is refused, so the test counts as unsupported); each output "
        "must match the expected one within |a-b| <= 1e-5 + 1e-3*|b| (floats) or "
        "exactly (integers, bools). A test is unsupported on the chip only when it is refused for one of the "
        "chip limits listed below (beyond the ops the front end itself lacks: strings, sequences, optionals, "
        "Loop/If/Scan, training and random ops, DFT/STFT, GridSample, RoiAlign, MaxUnpool, Unique, "
        "TfIdfVectorizer, which the interpreter already leaves unsupported); any other compile error, a "
        "firmware error, a simulator fault or a wrong value is a failure.";
    cc->runner.make_target = "conformance-chip";
    cc->runner.command = cc->command;
    cc->runner.label = "on the chip";
}

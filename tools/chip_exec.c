/* chip_exec.c - compile to an in-memory .abm and run it on the simulator,
 * reading tensors back by name (see chip_exec.h). */
#include "tools/chip_exec.h"
#include <stdlib.h>
#include <string.h>

static const struct { uint32_t abm; int ir; } dtypes[] = {
    {ABM_DTYPE_INT8, IR_I8}, {ABM_DTYPE_UINT8, IR_U8}, {ABM_DTYPE_INT16, IR_I16}, {ABM_DTYPE_INT32, IR_I32},
    {ABM_DTYPE_FP16, IR_F16}, {ABM_DTYPE_BF16, IR_BF16}, {ABM_DTYPE_FP32, IR_F32},
};

int chip_ir_dtype(uint32_t abm_dtype)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) if (dtypes[i].abm == abm_dtype) return dtypes[i].ir;
    return 0;
}

int chip_compile_graph(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int zlevel, uint8_t **abm,
                       size_t *len, BkSummary *sum, AtlErr *e)
{
    *abm = NULL;
    *len = 0;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(chip));
    if (!w) return atl_fail(e, "out of memory");
    if (zlevel >= 0) abm_writer_set_level(w, zlevel);
    BkOptions def;
    if (!opt) { bk_options_default(&def); opt = &def; }
    int rc = bk_compile(g, chip, opt, w, sum, e) || abm_serialize(w, abm, len, e) ? -1 : 0;
    abm_writer_free(w);
    return rc;
}

int chip_exec_open(ChipExec *x, const AtlChip *chip, const uint8_t *abm, size_t len, AtlSimMode mode, int trace, AtlErr *e)
{
    memset(x, 0, sizeof *x);
    x->chip = chip;
    if (abm_load_buffer(&x->model, abm, len, cfg_fingerprint(chip), 0, e)) return -1;
    if (!x->model.view.n_nets || !x->model.view.n_variants) return atl_fail(e, "the model has no variant to run");
    AbmNet net = abm_net(&x->model.view, 0);
    x->variant = net.first_variant;
    if (abm_variant_program(&x->model, x->variant, chip, &x->prog, &x->bases, e)) return -1;
    sim_options_default(&x->opt);
    x->opt.mode = mode;
    x->opt.trace = trace;
    x->sim = sim_create(chip, &x->opt, e);
    return x->sim ? 0 : -1;
}

int chip_exec_find(const ChipExec *x, const char *name)
{
    AbmVariant st = abm_variant(&x->model.view, x->variant);
    for (uint32_t i = st.tensor_first; i < st.tensor_first + st.tensor_count; i++)
        if (!strcmp(abm_tensor(&x->model.view, i).name, name)) return (int)i;
    return -1;
}

static uint8_t *tensor_bytes(ChipExec *x, const AbmTensor *t)
{
    if (t->region >= ABM_REGION_COUNT) return NULL;
    return sim_dram(x->sim, x->bases.base[t->region] + t->offset, t->size);
}

static int load_inputs(ChipExec *x, const IrTensor *inputs, int ninputs, AtlErr *e)
{
    x->ran = 0;
    if (sim_load(x->sim, &x->prog, e)) return -1;
    AbmVariant st = abm_variant(&x->model.view, x->variant);
    for (uint32_t i = st.tensor_first; i < st.tensor_first + st.tensor_count; i++) {
        AbmTensor t = abm_tensor(&x->model.view, i);
        if (t.role != ABM_ROLE_INPUT) continue;
        const IrTensor *in = NULL;
        for (int k = 0; k < ninputs && !in; k++) if (inputs[k].name && !strcmp(inputs[k].name, t.name)) in = &inputs[k];
        if (!in) return atl_fail(e, "input '%s' of the compiled model was not given", t.name);
        if (chip_ir_dtype(t.dtype) != in->dtype || ir_nbytes(in) != t.size)
            return atl_fail(e, "input '%s': given %s of %zu bytes, the compiled model takes %s of %llu bytes", t.name,
                            ir_dtype_name(in->dtype), ir_nbytes(in), abm_dtype_name(t.dtype), (unsigned long long)t.size);
        uint8_t *d = tensor_bytes(x, &t);
        if (!d) return atl_fail(e, "input '%s' lies outside the chip's DRAM", t.name);
        memcpy(d, in->data, t.size);
    }
    return 0;
}

int chip_exec_run(ChipExec *x, const IrTensor *inputs, int ninputs, AtlErr *e)
{
    if (load_inputs(x, inputs, ninputs, e) || sim_run(x->sim, e)) return -1;
    x->ran = 1;
    return 0;
}

int chip_exec_run_zeros(ChipExec *x, const IrGraph *g, int float_dt, AtlErr *e)
{
    IrTensor *ins = calloc((size_t)(g->nin ? g->nin : 1), sizeof *ins);
    if (!ins) return atl_fail(e, "out of memory");
    int n = 0, rc = -1;
    for (; n < g->nin; n++) {
        ins[n] = g->t[g->inputs[n]];
        ins[n].data = NULL;
        if (ins[n].dtype == IR_F32) ins[n].dtype = float_dt == ISA_BF16 ? IR_BF16 : float_dt == ISA_F16 ? IR_F16 : IR_F32;
        if (ir_alloc_data(&ins[n], e)) goto out;
    }
    rc = chip_exec_run(x, ins, n, e);
out:
    for (int i = 0; i < n; i++) free(ins[i].data);
    free(ins);
    return rc;
}

int chip_exec_run_until(ChipExec *x, const IrTensor *inputs, int ninputs, uint64_t max_cycles, AtlErr *e)
{
    AtlSimOptions o = x->opt;
    o.max_cycles = max_cycles ? max_cycles : x->opt.max_cycles;
    AtlSim *s = sim_create(x->chip, &o, e);
    if (!s) return -1;
    sim_free(x->sim);
    x->sim = s;
    if (load_inputs(x, inputs, ninputs, e)) return -1;
    if (sim_run(x->sim, e)) {
        if (sim_fault(x->sim)->kind != SIM_FAULT_MAX_CYCLES) return -1;
        e->msg[0] = 0;   /* stopped where asked: no error */
    }
    x->ran = 1;
    return 0;
}

int chip_exec_read(ChipExec *x, const char *name, IrTensor *out, AtlErr *e)
{
    memset(out, 0, sizeof *out);
    if (!x->ran) return atl_fail(e, "tensor '%s': the model has not run", name);
    int k = chip_exec_find(x, name);
    if (k < 0) return atl_fail(e, "tensor '%s' is not in the compiled model's tensor table", name);
    AbmTensor t = abm_tensor(&x->model.view, (uint32_t)k);
    out->dtype = chip_ir_dtype(t.dtype);
    if (!out->dtype) return atl_fail(e, "tensor '%s': dtype %s has no IR equivalent", name, abm_dtype_name(t.dtype));
    if (t.layout == ABM_LAYOUT_OPAQUE) return atl_fail(e, "tensor '%s' has an opaque layout", name);
    out->ndim = (int)t.ndim;
    for (uint32_t d = 0; d < t.ndim && d < IR_MAXDIM; d++) out->dims[d] = t.dims[d];
    out->producer = -1;
    if (ir_nbytes(out) != t.size) return atl_fail(e, "tensor '%s': %llu bytes for its shape", name, (unsigned long long)t.size);
    const uint8_t *d = tensor_bytes(x, &t);
    if (!d) return atl_fail(e, "tensor '%s' lies outside the chip's DRAM", name);
    out->name = ir_strdup(name);
    if (!out->name || ir_alloc_data(out, e)) { ir_tensor_free_contents(out); return atl_fail(e, "out of memory"); }
    memcpy(out->data, d, t.size);
    return 0;
}

void chip_exec_close(ChipExec *x)
{
    sim_free(x->sim);
    prog_free(&x->prog);
    abm_model_free(&x->model);
    memset(x, 0, sizeof *x);
}

/* ---- through the host API ---- */

static int host_fail(HostExec *h, AtlStatus st, const char *what, AtlErr *e)
{
    const char *msg = h->dev ? atl_last_error(h->dev) : "";
    return atl_fail(e, "%s: %s%s%s", what, atl_status_name(st), msg[0] ? ": " : "", msg);
}

int host_exec_open(HostExec *h, const AtlChip *chip, const uint8_t *abm, size_t len, const AtlOpenOptions *o, AtlErr *e)
{
    memset(h, 0, sizeof *h);
    AtlStatus st = atl_open_chip(&h->dev, chip, o);
    if (st != ATL_OK) return host_fail(h, st, "opening the device", e);
    st = atl_load_memory(h->dev, abm, len, &h->model);
    if (st != ATL_OK) return host_fail(h, st, "loading the model", e);
    return 0;
}

static const AtlVariantInfo *host_variant(const HostExec *h)
{
    const AtlNetInfo *nets;
    uint32_t n;
    if (atl_nets(h->model, &nets, &n) != ATL_OK || !n || h->variant >= nets[0].n_variants) return NULL;
    return &nets[0].variants[h->variant];
}

int host_exec_input_shapes(const HostExec *h, IrInputShape *shapes, int *n, int max, AtlErr *e)
{
    const AtlNetInfo *nets;
    uint32_t cnt;
    if (atl_nets(h->model, &nets, &cnt) != ATL_OK || !cnt || !nets[0].n_variants) return atl_fail(e, "the model has no variant");
    const AtlVariantInfo *s = &nets[0].variants[0];
    for (uint32_t i = 0; i < s->n_inputs; i++) {
        int given = 0;
        for (int k = 0; k < *n; k++) if (!strcmp(shapes[k].name, s->inputs[i].name)) given = 1;
        if (given) continue;
        if (*n == max) return atl_fail(e, "too many inputs");
        IrInputShape *x = &shapes[(*n)++];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", s->inputs[i].name);
        x->ndim = s->inputs[i].ndim;
        for (int d = 0; d < x->ndim && d < IR_MAXDIM; d++) x->dims[d] = s->inputs[i].dims[d];
    }
    return 0;
}

int host_exec_input_dtype(const HostExec *h, const char *name)
{
    const AtlNetInfo *nets;
    uint32_t n;
    if (atl_nets(h->model, &nets, &n) != ATL_OK || !n || !nets[0].n_variants) return 0;
    const AtlVariantInfo *s = &nets[0].variants[0];
    for (uint32_t i = 0; i < s->n_inputs; i++)
        if (!strcmp(s->inputs[i].name, name)) return chip_ir_dtype((uint32_t)s->inputs[i].dtype);
    return 0;
}

int host_exec_run(HostExec *h, const IrTensor *inputs, int ninputs, AtlErr *e)
{
    AtlBuffer *b = calloc((size_t)ninputs + 1, sizeof *b);
    if (!b) return atl_fail(e, "out of memory");
    for (int i = 0; i < ninputs; i++) {
        if (inputs[i].ndim > ATL_MAX_DIMS) { free(b); return atl_fail(e, "input '%s' has rank %d", inputs[i].name, inputs[i].ndim); }
        b[i].name = inputs[i].name;
        b[i].data = inputs[i].data;
        b[i].size = ir_nbytes(&inputs[i]);
        b[i].ndim = inputs[i].ndim;
        for (int k = 0; k < inputs[i].ndim; k++) b[i].dims[k] = (uint32_t)inputs[i].dims[k];
    }
    AtlStatus st = atl_run(h->model, NULL, b, (uint32_t)ninputs, &h->variant);
    free(b);
    return st == ATL_OK ? 0 : host_fail(h, st, "running the model", e);
}

int host_exec_output(HostExec *h, const char *name, IrTensor *t, AtlErr *e)
{
    memset(t, 0, sizeof *t);
    const AtlVariantInfo *s = host_variant(h);
    const AtlTensorInfo *info = NULL;
    for (uint32_t i = 0; s && i < s->n_outputs && !info; i++) if (!strcmp(s->outputs[i].name, name)) info = &s->outputs[i];
    if (!info) return atl_fail(e, "the compiled model has no output '%s'", name);
    t->dtype = chip_ir_dtype((uint32_t)info->dtype);
    if (!t->dtype) return atl_fail(e, "output '%s': dtype %d has no IR equivalent", name, info->dtype);
    t->ndim = info->ndim;
    for (int k = 0; k < info->ndim && k < IR_MAXDIM; k++) t->dims[k] = info->dims[k];
    t->producer = -1;
    if (ir_nbytes(t) != info->bytes) return atl_fail(e, "output '%s': %llu bytes for its shape", name, (unsigned long long)info->bytes);
    t->name = ir_strdup(name);
    if (!t->name || ir_alloc_data(t, e)) { ir_tensor_free_contents(t); return atl_fail(e, "out of memory"); }
    AtlStatus st = atl_output(h->model, name, 0, t->data, ir_nbytes(t));
    if (st != ATL_OK) { ir_tensor_free_contents(t); return host_fail(h, st, "reading an output", e); }
    return 0;
}

void host_exec_close(HostExec *h)
{
    if (h->model) atl_unload(h->model);
    atl_close(h->dev);
    memset(h, 0, sizeof *h);
}

/* abm.c - the compiled net's records in the .abm writer: a batch
 * variant (the .abm "variant" section; one per batch size of a net), the
 * graph's inputs and outputs (io region), every activation that exists in
 * DRAM (role activation, so tools can read it after a run; not tensors a
 * fused activation overwrote in place, nor ones never materialised), the
 * streams encoded per core and engine, the memory plan and the metadata.
 * Guarantees: tensors are listed in graph order, io first (inputs, then
 * outputs), so the .abm bytes depend only on the compilation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/alloc/alloc.h"
#include "compiler/emit/emit.h"

static int encode_streams(BkEmit *x, uint32_t variant, AtlErr *e)
{
    BkCtx *c = x->c;
    for (int core = 0; core < x->prog.ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            AtlStream *s = prog_stream(&x->prog, core, eng);
            uint8_t *buf = malloc((size_t)(s->count ? s->count : 1) * ISA_INSN_BYTES);
            if (!buf) return atl_fail(e, "out of memory encoding streams");
            for (int i = 0; i < s->count; i++)
                if (isa_encode(&s->insns[i], buf + (size_t)i * ISA_INSN_BYTES, e)) {
                    free(buf);
                    return atl_err_prefix(e, "core %d %s instruction %d (layer %d)", core, isa_engine_name(eng), i,
                                          (int)isa_tag_layer(s->insns[i].layer));
                }
            int rc = abm_set_stream(c->w, variant, (uint32_t)core, (uint32_t)eng, buf, (size_t)s->count * ISA_INSN_BYTES, e);
            free(buf);
            if (rc) return -1;
        }
    return 0;
}

static int add_io_tensors(BkCtx *c, uint32_t variant, AtlErr *e)
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
            /* placement split: the graph is one instance's; the io tensor holds them all */
            if (c->split && x->ndim > 0) d.dims[0] *= (uint32_t)c->io_scale;
            uint64_t addr = bk_tensor_addr(c, t);
            d.offset = addr & 0xffffffffu;
            uint32_t idx;
            if (abm_add_tensor(c->w, variant, &d, &idx, e)) return atl_err_prefix(e, "tensor '%s'", x->name);
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
        /* placement split lists none: each holds one instance's images at a
         * time; nor tensors in SRAM, which the host cannot read */
        if (c->split || c->pl[r].in_sram || c->pl[r].band || !c->pl[r].placed || c->pl[r].region != ABM_REGION_ACTIVATIONS || c->pl[r].internal) continue;
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
        if (abm_add_tensor(c->w, variant, &d, &idx, e)) return atl_err_prefix(e, "tensor '%s'", x->name);
    }
    return 0;
}

int bk_emit_abm(BkEmit *x, const char *name, int batch, const char *options_text, const uint8_t *source_hash,
                uint32_t *variant, AtlErr *e)
{
    BkCtx *c = x->c;
    AbmWriter *w = c->w;
    uint32_t net;
    /* a net of that name already in w gets one more variant (another batch size) */
    if (abm_writer_find_net(w, name, &net) && abm_add_net(w, name, &net, e)) return -1;
    if (abm_add_variant(w, net, (uint32_t)batch, (uint32_t)x->prog.ncores, variant, e)) return -1;
    if (add_io_tensors(c, *variant, e) || encode_streams(x, *variant, e)) return -1;
    uint64_t act = c->act_bytes * (uint64_t)(c->split ? c->clusters : 1);
    if (abm_set_mem_plan(w, *variant, act ? act : 64, c->io_bytes ? c->io_bytes : 64, e)) return -1;
    if (!abm_writer_has_metadata(w)) {
        uint8_t zero[ABM_HASH_BYTES] = {0};
        if (abm_set_metadata(w, "atoll " ATOLL_VERSION, options_text ? options_text : "", source_hash ? source_hash : zero,
                             e)) return -1;
    }
    return 0;
}

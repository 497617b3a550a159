/* variant.c - the end of a schedule in stages, shared by the staged
 * schedule (compile.c, compile_staged) and placement pipeline
 * (pipeline.c): the streams of every stage, already emitted into one
 * BkEmit, become one batch variant of the net, and the stages' layer rows
 * and figures go into the summary.
 *
 * The variant's records come from a context of the whole graph g of its
 * own (not any stage's): g's inputs and outputs at the io places the
 * caller fixed for every stage (whole batch each), no activation listed
 * (each stage's hold one instance at a time), the activation region as
 * large as the caller says (every stage's, every cluster's copy).
 * Each schedule adds what only it knows to the summary afterwards (its
 * cycles, the cores or clusters of a stage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/backend/stage.h"

uint64_t bk_stages_io(const IrGraph *g, const BkOptions *opt, const int *bound, int nbound, uint64_t *io_fixed)
{
    BkCtx c;   /* what bk_tensor_es reads: the graph and the float dtype */
    memset(&c, 0, sizeof c);
    c.g = g;
    c.dt = opt->dtype;
    c.es = isa_dtype_size(opt->dtype);
    uint64_t off = 0;
    for (int k = 0; k < g->nin + g->nout + nbound; k++) {
        int t = k < g->nin ? g->inputs[k] : k < g->nin + g->nout ? g->outputs[k - g->nin] : bound[k - g->nin - g->nout];
        if (io_fixed[t]) continue;
        off = (off + 63) / 64 * 64;
        io_fixed[t] = off + 1;
        off += (uint64_t)ir_numel(&g->t[t]) * (uint64_t)bk_tensor_es(&c, t);
    }
    return (off + 63) / 64 * 64;
}

int bk_stages_variant(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkStages *s,
                      BkEmit *emit, uint32_t *variant, BkSummary *sum, AtlErr *e)
{
    BkCtx ac;   /* the variant's records: g's io at the fixed places */
    memset(&ac, 0, sizeof ac);
    ac.g = g;
    ac.chip = chip;
    ac.w = s->st[0].c.w;
    ac.dt = opt->dtype;
    ac.es = isa_dtype_size(ac.dt);
    ac.pl = calloc((size_t)g->nt + 1, sizeof *ac.pl);
    if (!ac.pl) return atl_fail(e, "out of memory");
    for (int k = 0; k < g->nin + g->nout; k++) {
        int t = k < g->nin ? g->inputs[k] : g->outputs[k - g->nin];
        ac.pl[t].root = t;
        ac.pl[t].placed = 1;
        ac.pl[t].region = ABM_REGION_IO;
        ac.pl[t].offset = s->io_fixed[t] - 1;
    }
    ac.split = 1;       /* no activation listed: they hold one instance at a time */
    ac.io_scale = 1;    /* g's io tensors have the whole batch already */
    ac.clusters = 1;
    ac.act_bytes = s->act_bytes;
    ac.io_bytes = s->io_bytes;
    BkCtx *was = emit->c;
    emit->c = &ac;
    char name[128];
    snprintf(name, sizeof name, "%s", opt->net_name ? opt->net_name : (g->name && g->name[0] ? g->name : "net"));
    int rc = bk_emit_abm(emit, name, s->batch, opt->options_text, opt->source_hash, variant, e);
    emit->c = was;
    free(ac.pl);
    if (rc || !sum) return rc;
    int rows = 0;
    for (int i = 0; i < s->n; i++) rows += s->st[i].nunits;
    sum->layers = calloc((size_t)(rows ? rows : 1), sizeof *sum->layers);
    if (!sum->layers) return atl_fail(e, "out of memory");
    sum->nstages = s->n;
    for (int i = 0, row = 0; i < s->n; i++) {
        BkSummary one;
        memset(&one, 0, sizeof one);
        one.layers = sum->layers + row;
        if (ops->fill_summary(&s->st[i], s->st[i].nunits, emit, s->batch, &one, e)) return -1;
        for (int k = 0; k < BK_NPHASES; k++) sum->phase_s[k] += s->st[i].phase[k];
        sum->stage_m[i] = s->m[i];
        sum->stage_chip[i] = !s->st[i].c.split;
        sum->stage_sram[i] = one.act_sram;
        sum->stage_dram_tensors[i] = one.act_dram_tensors;
        sum->stage_row[i] = row;
        if (i) snprintf(sum->stage_in[i], sizeof sum->stage_in[i], "%s", g->t[s->bound[i]].name);
        for (int k = 0; k < one.nlayers; k++) {
            sum->stage_macs[i] += one.layers[k].macs * (uint64_t)(s->batch / s->m[i]);
            sum->stage_mat_cycles[i] += one.layers[k].mat_cycles * (uint64_t)(s->batch / s->m[i]);
        }
        sum->nlayers += one.nlayers;
        /* every stage's blobs are in the one weights region: its end, once */
        if (one.weight_bytes > sum->weight_bytes) sum->weight_bytes = one.weight_bytes;
        sum->act_sum += one.act_sum;
        sum->act_dram_tensors += one.act_dram_tensors;
        if (one.act_peak > sum->act_peak) sum->act_peak = one.act_peak;
        if (one.act_sram > sum->act_sram) sum->act_sram = one.act_sram;
        sum->insns = one.insns;
        sum->cores = one.cores;
        row += s->st[i].nunits;
    }
    sum->io_bytes = s->io_bytes;
    sum->batch = s->batch;
    sum->split = 1;
    return 0;
}

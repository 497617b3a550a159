/* driver.c - the compile driver (see driver.h): import once, then per batch
 * size fix the input shapes, infer, canonicalise and run the backend.
 *
 * The model is imported once and cloned for every variant but the last (the
 * import was done once per variant before, twice with the shape probe: half
 * a second of ResNet-50's compile with synthetic weights). A clone holds
 * exactly what a fresh import gives, so the .abm is byte for byte the same.
 */
#include "compiler/driver/driver.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/onnx/onnx.h"
#include "compiler/ops/ops.h"
#include "compiler/passes/passes.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/sha256.h"

const char *drv_phase_name(int phase)
{
    static const char *const front[] = {"import", "passes"};
    if (phase < DRV_PH_BACKEND) return front[phase];
    if (phase < DRV_NPHASES) return bk_phase_names[phase - DRV_PH_BACKEND];
    return "?";
}

void drv_result_free(DrvResult *res)
{
    for (int i = 0; i < res->nvariants; i++) bk_summary_free(&res->variants[i]);
    free(res->variants);
    free(res->unsupported);
    memset(res, 0, sizeof *res);
}

int drv_batch_shapes(const IrGraph *g, int batch, IrInputShape *shapes, int *n, int max, char *chose, size_t cap, AtlErr *e)
{
    for (int i = 0; i < g->nin; i++) {
        const IrTensor *t = &g->t[g->inputs[i]];
        int given = 0;
        for (int k = 0; k < *n; k++)
            if (!strcmp(shapes[k].name, t->name)) {
                given = 1;
                /* --input-shape with --batch: its dimension 0 is the batch when it is --batch's */
                if (batch > 0 && shapes[k].ndim > 0 && shapes[k].dims[0] == batch) shapes[k].is_batch = 1;
            }
        if (given || (!batch && (t->ndim < 1 || t->dims[0] >= 0))) continue;
        if (t->ndim < 1) return atl_fail(e, "--batch: input '%s' has no batch dimension", t->name);
        if (*n == max) return atl_fail(e, "too many inputs");
        IrInputShape *s = &shapes[(*n)++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", t->name);
        s->ndim = t->ndim;
        s->dims[0] = batch ? batch : 1;
        s->is_batch = batch > 0;
        for (int d = 1; d < t->ndim; d++) {
            if (t->dims[d] < 0) return atl_fail(e, "--batch: input '%s' dimension %d is unknown; give --input-shape", t->name, d);
            s->dims[d] = t->dims[d];
        }
        if (!batch && chose) {
            size_t k = strlen(chose);
            snprintf(chose + k, cap - k, "%s'%s'", k ? ", " : "", t->name);
        }
    }
    return 0;
}

static void progress(const DrvRequest *rq, const char *what)
{
    if (rq->progress) rq->progress(rq->progress_ctx, what);
}

/* The options text the .abm records (atoll compile's, whoever compiles). */
static void options_text(const DrvRequest *rq, int synthetic, int batch, char *opts, size_t cap)
{
    char dtype[48];
    snprintf(dtype, sizeof dtype, "--dtype %s", isa_dtype_name(rq->dtype));
    snprintf(opts, cap, "--chip %s %s%s%s", rq->chip->name, rq->dtype_text ? rq->dtype_text : dtype,
             synthetic ? " --synthetic-weights" : "", rq->group == BK_GROUP_NONE ? " --group none" : "");
    size_t n = strlen(opts);
    if (rq->group_max) snprintf(opts + n, cap - n, " --group-max %d", rq->group_max);
    static const char *const gw[] = {"auto", "resident", "stream"};
    n = strlen(opts);
    if (rq->group_weights > 0 && rq->group_weights < 3) snprintf(opts + n, cap - n, " --group-weights %s", gw[rq->group_weights]);
    n = strlen(opts);
    if (rq->group_cslice > 0 && rq->group_cslice < 3) snprintf(opts + n, cap - n, " --group-cslice %s", rq->group_cslice == 1 ? "never" : "only");
    static const char *const place[] = {"auto", "chip", "split", "pipeline"};
    n = strlen(opts);
    if (rq->placement > 0 && rq->placement < 4) snprintf(opts + n, cap - n, " --placement %s", place[rq->placement]);
    n = strlen(opts);
    if (rq->micro_batch) snprintf(opts + n, cap - n, " --micro-batch %d", rq->micro_batch);
    n = strlen(opts);
    if (rq->schedule == BK_SCHED_UNIFORM) snprintf(opts + n, cap - n, " --schedule uniform");
    n = strlen(opts);
    if (rq->sram_acts == BK_SRAM_ACTS_NEVER) snprintf(opts + n, cap - n, " --sram-activations never");
    if (rq->sram_acts == BK_SRAM_ACTS_BANDS) snprintf(opts + n, cap - n, " --sram-activations bands");
    if (rq->sram_acts == BK_SRAM_ACTS_ROWS) snprintf(opts + n, cap - n, " --sram-activations rows");
    n = strlen(opts);
    if (rq->sram_weights == BK_SRAM_NEVER) snprintf(opts + n, cap - n, " --sram-weights never");
    if (rq->sram_weights == BK_SRAM_ALWAYS) snprintf(opts + n, cap - n, " --sram-weights always");
    n = strlen(opts);
    if (rq->stage_sram == BK_SRAM_NEVER) snprintf(opts + n, cap - n, " --stage-sram never");
    if (rq->stage_sram == BK_SRAM_ALWAYS) snprintf(opts + n, cap - n, " --stage-sram always");
    n = strlen(opts);
    if (rq->sram_pair == BK_PAIR_ALWAYS) snprintf(opts + n, cap - n, " --sram-pair");
    if (rq->sram_pair == BK_PAIR_NEVER) snprintf(opts + n, cap - n, " --no-sram-pair");
    n = strlen(opts);
    if (rq->no_halo_stage) snprintf(opts + n, cap - n, " --no-halo-staging");
    if (rq->no_shards) snprintf(opts + n, cap - n, " --no-shards");
    n = strlen(opts);
    if (rq->no_chain_pack) snprintf(opts + n, cap - n, " --no-chain-pack");
    n = strlen(opts);
    if (rq->no_reorder) snprintf(opts + n, cap - n, " --no-reorder");
    n = strlen(opts);
    if (rq->bytes_slack && rq->bytes_slack != BK_BYTES_SLACK) snprintf(opts + n, cap - n, " --bytes-slack %d", rq->bytes_slack);
    n = strlen(opts);
    if (rq->prefetch == BK_PREFETCH_NEVER) snprintf(opts + n, cap - n, " --prefetch never");
    n = strlen(opts);
    if (rq->kbands != BK_KBANDS_AUTO) snprintf(opts + n, cap - n, " --kbands %s", rq->kbands == BK_KBANDS_NEVER ? "never" : "always");
    n = strlen(opts);
    if (rq->dw_matrix) snprintf(opts + n, cap - n, " --depthwise matrix");
    n = strlen(opts);
    if (rq->stage_plan) snprintf(opts + n, cap - n, " --stage-plan %s", rq->stage_plan);
    if (!batch) return;
    n = strlen(opts);
    snprintf(opts + n, cap - n, " --batch ");
    for (int k = 0; k < rq->nbatch; k++) {
        n = strlen(opts);
        snprintf(opts + n, cap - n, "%s%d", k ? "," : "", rq->batches[k]);
    }
}

/* A row for each member of layer group l (its node name and op, keyed by
 * the member tag its instructions carry, isa_member_tag; no estimate of
 * its own), after the group's row. */
static int add_member_rows(AbmWriter *w, uint32_t variant, const BkLayerInfo *l, AtlErr *e)
{
    if (l->nmembers < 2 || !l->members || l->layer_id > ISA_MAX_TAGGED_LAYER) return 0;
    const char *p = l->members;
    for (unsigned k = 0; *p && k < ISA_MAX_MEMBERS; k++) {
        char name[256], op[64];
        size_t n = strcspn(p, "\t\n"), m;
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        p += n + (p[n] == '\t');
        m = strcspn(p, "\n");
        snprintf(op, sizeof op, "%.*s", (int)m, p);
        p += m + (p[m] == '\n');
        AbmLayer row = {variant, isa_member_tag((unsigned)l->layer_id, k), name, op, "", 0, 0, 0, 0, 0, 0, 0};
        if (abm_add_layer(w, variant, &row, e)) return -1;
    }
    return 0;
}

/* The backend's layer rows into the .abm's layers section for variant. */
static int add_layer_rows(AbmWriter *w, uint32_t variant, const BkSummary *s, AtlErr *e)
{
    for (int i = 0; i < s->nlayers; i++) {
        const BkLayerInfo *l = &s->layers[i];
        AbmLayer row = {variant, (uint32_t)l->layer_id, l->name, l->op, l->split, (uint32_t)l->tiles, (uint32_t)l->cores,
                        l->is_matrix ? ABM_LAYER_MATRIX : 0, l->macs, l->est_cycles, l->est_compute, l->est_dma};
        if (abm_add_layer(w, variant, &row, e) || add_member_rows(w, variant, l, e)) return -1;
    }
    return 0;
}

/* Fixes the shapes of g (a fresh import or a clone) for one variant, infers,
 * canonicalises and compiles it into w. */
static int compile_variant(const char *path, IrGraph *g, const DrvRequest *rq, int batch, const uint8_t *hash, int synthetic,
                         AbmWriter *w, DrvResult *res, AtlErr *e)
{
    enum { MAXSH = 64 };
    IrInputShape sh[MAXSH];
    int nsh = rq->nshapes < MAXSH ? rq->nshapes : MAXSH;
    if (nsh > 0) memcpy(sh, rq->shapes, sizeof sh[0] * (size_t)nsh);   /* shapes may be NULL when none are given */
    double t0 = atl_clock_s();
    if (drv_batch_shapes(g, batch, sh, &nsh, MAXSH, res->nvariants ? NULL : res->chose_batch, sizeof res->chose_batch, e))
        return atl_err_prefix(e, "%s", path);
    if (ir_apply_input_shapes(g, sh, nsh, e)) return -1;
    if (ir_infer_shapes(g, e)) {
        if (!res->unsupported) res->unsupported = ir_unsupported_report(g, NULL, NULL);
        return atl_err_prefix(e, "%s", path);
    }
    res->phase_s[DRV_PH_IMPORT] += atl_clock_s() - t0;
    progress(rq, "canonicalising");
    t0 = atl_clock_s();
    int bad = pass_run_all(g, e);
    res->phase_s[DRV_PH_PASSES] += atl_clock_s() - t0;
    if (bad) return -1;
    if (g->batch_followed && !res->batch_followed[0])
        snprintf(res->batch_followed, sizeof res->batch_followed, "%d node%s read%s constants that held the exported batch "
                 "%lld; they follow --batch %lld (the first: node '%.100s')", g->batch_followed, g->batch_followed == 1 ? "" : "s",
                 g->batch_followed == 1 ? "s" : "", (long long)g->batch_from, (long long)g->batch_to, g->batch_followed_first);
    char opts[512];
    options_text(rq, synthetic, batch, opts, sizeof opts);
    BkOptions o;
    bk_options_default(&o);
    o.dtype = rq->dtype;
    o.net_name = rq->net_name;
    o.options_text = opts;
    o.keep_activations = rq->keep_activations;
    o.group = rq->group;
    o.group_max = rq->group_max;
    o.group_weights = rq->group_weights;
    o.group_cslice = rq->group_cslice;
    o.placement = rq->placement;
    o.micro_batch = rq->micro_batch;
    o.schedule = rq->schedule;
    o.sram_acts = rq->sram_acts;
    o.sram_weights = rq->sram_weights;
    o.stage_sram = rq->stage_sram;
    o.sram_pair = rq->sram_pair;
    o.no_halo_stage = rq->no_halo_stage;
    o.no_shards = rq->no_shards;
    o.no_chain_pack = rq->no_chain_pack;
    o.no_reorder = rq->no_reorder;
    o.bytes_slack = rq->bytes_slack;
    o.prefetch = rq->prefetch;
    o.kbands = rq->kbands;
    o.dw_matrix = rq->dw_matrix;
    o.stage_plan = rq->stage_plan;
    o.source_hash = hash;
    BkSummary *grown = realloc(res->variants, (size_t)(res->nvariants + 1) * sizeof *grown);
    if (!grown) return atl_fail(e, "out of memory");
    res->variants = grown;
    BkSummary *sum = &res->variants[res->nvariants++];
    memset(sum, 0, sizeof *sum);
    progress(rq, "backend (lowering, tile search, emission)");
    if (bk_compile(g, rq->chip, &o, w, sum, e)) return atl_err_prefix(e, "%s", path);
    for (int i = 0; i < BK_NPHASES; i++) res->phase_s[DRV_PH_BACKEND + i] += sum->phase_s[i];
    return rq->layer_info ? add_layer_rows(w, abm_writer_variant_count(w) - 1, sum, e) : 0;
}

int drv_compile(const char *path, const DrvRequest *rq, AbmWriter *w, DrvResult *res, AtlErr *e)
{
    memset(res, 0, sizeof *res);
    /* the .abm records the SHA-256 of the ONNX file it came from */
    uint8_t hash[ATL_SHA256_BYTES];
    unsigned char *src = NULL;
    size_t srclen = 0;
    progress(rq, "importing");
    double t0 = atl_clock_s();
    if (atl_read_file(path, &src, &srclen, e)) return -1;
    atl_sha256(src, srclen, hash);
    OnnxLoadOpts lo = {rq->synthetic_weights, 0, 0, rq->synthetic_max_bytes};
    IrGraph base;
    int rc = rq->model_buf ? onnx_load_buffer_opts(rq->model_buf, rq->model_len, path, &lo, &base, e)
                           : onnx_load_buffer_opts(src, srclen, path, &lo, &base, e);
    free(src);
    if (!rc && (ir_toposort(&base, e) || ir_verify(&base, e))) rc = atl_err_prefix(e, "%s", path);
    res->phase_s[DRV_PH_IMPORT] += atl_clock_s() - t0;
    res->nsynthetic = lo.nsynthetic;
    res->synthetic_bytes = lo.synthetic_bytes;
    if (rq->synthetic_raw && (lo.nsynthetic > 0 || rq->model_synthetic)) abm_writer_set_level(w, 0);
    int n = rq->nbatch ? rq->nbatch : 1;
    for (int b = 0; b < n && !rc; b++) {
        IrGraph g;
        if (b < n - 1) {
            t0 = atl_clock_s();
            rc = ir_clone(&base, &g, e);
            res->phase_s[DRV_PH_IMPORT] += atl_clock_s() - t0;
            if (rc) break;
        } else {
            g = base;            /* the last variant takes the import itself */
            ir_init(&base);
        }
        rc = compile_variant(path, &g, rq, rq->nbatch ? rq->batches[b] : 0, hash, lo.nsynthetic > 0 || rq->model_synthetic, w, res, e);
        ir_free(&g);
    }
    ir_free(&base);
    return rc;
}

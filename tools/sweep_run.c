/* sweep_run.c - runs sweep points and formats their CSV rows (see
 * sweep_run.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/sweep_run.h"
#include "tools/chip_exec.h"
#include "tools/model_io.h"
#include "compiler/passes/passes.h"
#include "isa/area.h"
#include "util/csv.h"
#include "util/file.h"

/* The result columns, after point, the varied keys, model, dtype, batch. */
static const char *const result_columns[] = {
    "fingerprint", "status", "cycles", "est_cycles", "images_per_s", "mac_util", "dram_bytes",
    "energy_mac_pj", "energy_vector_pj", "energy_lmem_pj", "energy_sram_pj", "energy_noc_pj", "energy_dram_pj",
    "energy_static_pj", "energy_total_pj", "area_mm2", "images_per_s_per_mm2", "images_per_s_per_w", "error",
};
#define NRESULT (int)(sizeof result_columns / sizeof result_columns[0])

int sweep_csv_first_result(const SweepSpec *s) { return 1 + s->nkeys + 3; }
int sweep_csv_columns(const SweepSpec *s) { return sweep_csv_first_result(s) + NRESULT; }

void sweep_csv_header(const SweepSpec *s, StrBuf *b)
{
    sbuf_printf(b, "point");
    for (int i = 0; i < s->nkeys; i++) {
        sbuf_put(b, ",", 1);
        csv_put_field(b, s->keys[i].name);
    }
    sbuf_printf(b, ",model,dtype,batch");
    for (int i = 0; i < NRESULT; i++) sbuf_printf(b, ",%s", result_columns[i]);
    sbuf_put(b, "\n", 1);
}

/* point, the varied keys' values, model, dtype, batch. */
static void row_start(const SweepSpec *s, const SweepPoint *p, StrBuf *b)
{
    sbuf_printf(b, "%" PRId64, p->id);
    for (int i = 0; i < s->nkeys; i++) {
        sbuf_put(b, ",", 1);
        csv_put_field(b, s->keys[i].values[p->value[i]]);
    }
    sbuf_put(b, ",", 1);
    csv_put_field(b, s->model_names[p->model]);
    sbuf_printf(b, ",%s,%d", sweep_dtype_name(s->dtypes[p->dtype]), s->batches[p->batch]);
}

/* The reason of a failure on one line (the CSV stays one row per line). */
static void put_reason(StrBuf *b, const char *reason)
{
    char one[1024];
    snprintf(one, sizeof one, "%s", reason);
    for (char *c = one; *c; c++) if ((unsigned char)*c < 0x20) *c = ' ';
    csv_put_field(b, one);
}

static void failed_row(const SweepSpec *s, const SweepPoint *p, uint64_t fp, const char *reason, StrBuf *b)
{
    row_start(s, p, b);
    if (fp) sbuf_printf(b, ",%016" PRIx64, fp);
    else sbuf_put(b, ",", 1);
    sbuf_printf(b, ",failed");
    for (int i = 2; i < NRESULT - 1; i++) sbuf_put(b, ",", 1);
    sbuf_put(b, ",", 1);
    put_reason(b, reason);
    sbuf_put(b, "\n", 1);
}

void sweep_failed_row(const SweepSpec *s, int64_t id, const char *reason, StrBuf *row)
{
    SweepPoint p;
    sweep_point(s, id, &p);
    failed_row(s, &p, 0, reason, row);
}

void sweep_compile_key(const SweepSpec *s, const SweepPoint *p, char *key, size_t cap, uint64_t *fp)
{
    AtlChip c;
    AtlErr e;
    *fp = sweep_point_chip(s, p, !s->per_point_compile, &c, &e) ? 0 : cfg_fingerprint(&c);
    if (!*fp || s->per_point_compile) snprintf(key, cap, "point %" PRId64, p->id);
    else snprintf(key, cap, "%d/%d/%d/%016" PRIx64, p->model, p->dtype, p->batch, *fp);
}

/* ---- the runner ---- */

struct SweepRunner {
    const SweepSpec *spec;
    const char *stats_dir;
    /* the graph of (model, batch) last loaded */
    int g_model, g_batch, g_loaded;
    IrGraph graph;
    char g_error[1024];        /* non-empty: loading it failed */
    /* the model last compiled, by compile key */
    char key[128];
    uint8_t *abm;
    size_t abm_len;
    BkSummary sum;
    char c_error[1024];        /* non-empty: compiling failed */
};

SweepRunner *sweep_runner_new(const SweepSpec *s, const char *stats_dir)
{
    SweepRunner *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->spec = s;
    r->stats_dir = stats_dir;
    r->g_model = -1;
    ir_init(&r->graph);
    return r;
}

static void drop_compiled(SweepRunner *r)
{
    free(r->abm);
    r->abm = NULL;
    r->abm_len = 0;
    bk_summary_free(&r->sum);
    memset(&r->sum, 0, sizeof r->sum);
    r->key[0] = 0;
    r->c_error[0] = 0;
}

void sweep_runner_free(SweepRunner *r)
{
    if (!r) return;
    drop_compiled(r);
    ir_free(&r->graph);
    free(r);
}

/* Loads and canonicalises (model, batch) unless it is the graph in hand. */
static void load_graph(SweepRunner *r, int model, int batch)
{
    if (r->g_model == model && r->g_batch == batch) return;
    if (r->g_loaded) ir_free(&r->graph);
    ir_init(&r->graph);
    r->g_model = model;
    r->g_batch = batch;
    r->g_loaded = 0;
    r->g_error[0] = 0;
    const char *path = r->spec->model_paths[model];
    OnnxLoadOpts lo = {1, 0, 0, 0};
    AtlErr e;
    if (model_load_batch("sweep", path, NULL, 0, batch, &lo, &r->graph, &e) || pass_run_all(&r->graph, &e)) {
        const char *msg = strncmp(e.msg, "--input-shape: ", 15) ? e.msg : e.msg + 15;
        snprintf(r->g_error, sizeof r->g_error, "batch %d: %s", batch, msg);
    }
    r->g_loaded = 1;
}

/* Compiles for the compile key unless that is the model in hand. */
static void compile(SweepRunner *r, const SweepPoint *p, const char *key, const AtlChip *cchip)
{
    if (!strcmp(r->key, key)) return;
    drop_compiled(r);
    snprintf(r->key, sizeof r->key, "%s", key);
    load_graph(r, p->model, r->spec->batches[p->batch]);
    if (r->g_error[0]) { snprintf(r->c_error, sizeof r->c_error, "%s", r->g_error); return; }
    BkOptions o;
    bk_options_default(&o);
    o.dtype = r->spec->dtypes[p->dtype];
    AtlErr e;
    if (chip_compile_graph(&r->graph, cchip, &o, 0, &r->abm, &r->abm_len, &r->sum, &e))
        snprintf(r->c_error, sizeof r->c_error, "compile: %s", e.msg);
}

/* Zero-filled inputs for every input tensor of the variant (timing-only runs
 * read no values). *list malloc'd; free with model_free_inputs. */
static int zero_inputs(const ChipExec *x, IrTensor **list, int *n, AtlErr *e)
{
    AbmVariant st = abm_variant(&x->model.view, x->variant);
    *list = calloc(st.tensor_count + 1, sizeof **list);
    *n = 0;
    if (!*list) return atl_fail(e, "out of memory");
    for (uint32_t i = st.tensor_first; i < st.tensor_first + st.tensor_count; i++) {
        AbmTensor t = abm_tensor(&x->model.view, i);
        if (t.role != ABM_ROLE_INPUT) continue;
        IrTensor *in = &(*list)[(*n)++];
        in->producer = -1;
        in->dtype = chip_ir_dtype(t.dtype);
        if (!in->dtype) return atl_fail(e, "input '%s': dtype %s has no IR equivalent", t.name, abm_dtype_name(t.dtype));
        in->ndim = (int)t.ndim;
        for (uint32_t d = 0; d < t.ndim && d < IR_MAXDIM; d++) in->dims[d] = t.dims[d];
        if (ir_nbytes(in) != t.size) return atl_fail(e, "input '%s' has a padded layout", t.name);
        in->name = ir_strdup(t.name);
        if (!in->name || ir_alloc_data(in, e)) return atl_fail(e, "out of memory");
        memset(in->data, 0, t.size);
    }
    return 0;
}

/* point-ID.json: the simulator's stats with the point and the compiler's
 * per-layer names, ops and estimates added before the closing brace. */
static int write_stats(SweepRunner *r, const SweepPoint *p, const AtlSim *sim, AtlErr *e)
{
    const SweepSpec *s = r->spec;
    char *json = sim_stats_json(sim);
    if (!json) return atl_fail(e, "out of memory");
    char *close = strrchr(json, '}');
    if (!close) { free(json); return atl_fail(e, "stats JSON without a closing brace"); }
    StrBuf b = {0};
    sbuf_put(&b, json, (size_t)(close - json));
    free(json);
    while (b.len && (b.p[b.len - 1] == '\n' || b.p[b.len - 1] == ' ')) b.p[--b.len] = 0;
    sbuf_printf(&b, ",\n  \"point\": {\"id\":%" PRId64 ",\"model\":", p->id);
    sbuf_json_str(&b, s->model_names[p->model]);
    sbuf_printf(&b, ",\"dtype\":\"%s\",\"batch\":%d,\"values\":{", sweep_dtype_name(s->dtypes[p->dtype]), s->batches[p->batch]);
    for (int i = 0; i < s->nkeys; i++) {
        sbuf_printf(&b, "%s", i ? "," : "");
        sbuf_json_str(&b, s->keys[i].name);
        sbuf_put(&b, ":", 1);
        sbuf_json_str(&b, s->keys[i].values[p->value[i]]);
    }
    sbuf_printf(&b, "}},\n  \"layer_info\": [");
    for (int i = 0; i < r->sum.nlayers; i++) {
        const BkLayerInfo *l = &r->sum.layers[i];
        sbuf_printf(&b, "%s\n    {\"layer\":%d,\"name\":", i ? "," : "", l->layer_id);
        sbuf_json_str(&b, l->name);
        sbuf_printf(&b, ",\"op\":");
        sbuf_json_str(&b, l->op);
        sbuf_printf(&b, ",\"split\":");
        sbuf_json_str(&b, l->split);
        sbuf_printf(&b, ",\"tiles\":%d,\"cores\":%d,\"macs\":%llu,\"est_cycles\":%llu,\"est_compute\":%llu,\"est_dma\":%llu}",
                    l->tiles, l->cores, (unsigned long long)l->macs, (unsigned long long)l->est_cycles,
                    (unsigned long long)l->est_compute, (unsigned long long)l->est_dma);
    }
    sbuf_printf(&b, "\n  ]\n}\n");
    char *text = sbuf_take(&b);
    if (!text) return atl_fail(e, "out of memory");
    char path[1200];
    snprintf(path, sizeof path, "%s/point-%" PRId64 ".json", r->stats_dir, p->id);
    int rc = atl_write_file_atomic(path, text, strlen(text), e);
    free(text);
    return rc;
}

static void ok_row(SweepRunner *r, const SweepPoint *p, const AtlChip *chip, uint64_t fp, const AtlSimStats *st, StrBuf *b)
{
    const SweepSpec *s = r->spec;
    int batch = s->batches[p->batch];
    double seconds = st->seconds > 0 ? st->seconds : 1e-30;
    double ips = batch / seconds, joules = st->energy.total * 1e-12;
    AtlArea a;
    int has_area = cfg_area(chip, &a);
    row_start(s, p, b);
    sbuf_printf(b, ",%016" PRIx64 ",ok,%llu,%llu,%.6g,%.6g,%llu", fp, (unsigned long long)st->cycles,
                (unsigned long long)r->sum.est_cycles, ips, st->mm_util,
                (unsigned long long)(st->bytes.dram_rd + st->bytes.dram_wr));
    const AtlSimEnergy *en = &st->energy;
    sbuf_printf(b, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", en->mac, en->vec, en->lmem, en->sram, en->noc, en->dram, en->stat,
                en->total);
    if (has_area) sbuf_printf(b, ",%.6g,%.6g", a.total, a.total > 0 ? ips / a.total : 0);
    else sbuf_printf(b, ",,");
    if (joules > 0) sbuf_printf(b, ",%.6g,\n", batch / joules);
    else sbuf_printf(b, ",,\n");
}

void sweep_runner_point(SweepRunner *r, int64_t id, StrBuf *row)
{
    const SweepSpec *s = r->spec;
    SweepPoint p;
    sweep_point(s, id, &p);
    AtlChip chip, cchip;
    AtlErr e;
    if (sweep_point_chip(s, &p, 0, &chip, &e)) { failed_row(s, &p, 0, e.msg, row); return; }
    if (sweep_point_chip(s, &p, !s->per_point_compile, &cchip, &e)) { failed_row(s, &p, 0, e.msg, row); return; }
    uint64_t fp = cfg_fingerprint(&cchip);
    char key[128];
    uint64_t kfp;
    sweep_compile_key(s, &p, key, sizeof key, &kfp);
    compile(r, &p, key, &cchip);
    if (r->c_error[0]) { failed_row(s, &p, fp, r->c_error, row); return; }
    ChipExec x;
    IrTensor *in = NULL;
    int nin = 0;
    int rc = chip_exec_open(&x, &chip, r->abm, r->abm_len, SIM_MODE_TIMING, 0, &e) || zero_inputs(&x, &in, &nin, &e) ||
             chip_exec_run(&x, in, nin, &e);
    if (rc) atl_err_prefix(&e, "simulate");
    if (!rc && r->stats_dir && write_stats(r, &p, x.sim, &e)) rc = -1;
    if (rc) failed_row(s, &p, fp, e.msg, row);
    else ok_row(r, &p, &chip, fp, sim_stats(x.sim), row);
    model_free_inputs(in, nin);
    chip_exec_close(&x);
}

/* cmd_compile.c - `atoll compile MODEL.onnx --chip FILE -o MODEL.abm`:
 * imports the model, fixes input shapes (--input-shape, --batch), runs the
 * canonicalisation passes and the backend (compiler/backend/backend.h), writes the
 * .abm atomically and prints a summary: layers, estimated cycles and the
 * memory plan. `--batch 1,8` compiles one stage per batch size into the same
 * net. --estimate adds the cost model's cycles per layer; --dump-ir prints
 * the IR after the passes instead of compiling. --synthetic-weights fills
 * initializers whose external data file is missing (timing studies on
 * full-size graphs; compiler/onnx/synth_weights.h). --time prints the wall time
 * of each compiler phase (import, passes, the backend's phases, write). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/model_io.h"
#include "tools/quantize.h"
#include "compiler/passes/passes.h"
#include "compiler/backend/backend.h"
#include "compiler/onnx/onnx.h"
#include "isa/config.h"
#include "util/file.h"
#include "util/sha256.h"
#include "util/clock.h"
#include "util/csv.h"
#include "util/strbuf.h"

const char cmd_compile_summary[] = "compile an ONNX model for a chip into an .abm (or --dump-ir)";

#define MAXOPT 64
#define MAXBATCH 16

static void usage(FILE *f)
{
    fprintf(f,
            "usage: atoll compile MODEL.onnx --chip CHIP.ini -o MODEL.abm [options]\n"
            "       atoll compile MODEL.onnx --dump-ir [--no-passes] [--input-shape NAME=DIMS]...\n"
            "options:\n"
            "  --chip FILE            chip description (configs/*.ini)\n"
            "  -o FILE                output .abm\n"
            "  --dtype f32|fp32|f16|fp16|bf16|int8   storage/compute dtype (default fp32); int8 quantises\n"
            "                         the model first (needs --calib; docs/quantization.md)\n"
            "  --calib DATA           int8: calibration data (.npy, .npz or a folder of them; repeatable)\n"
            "  --method M             int8: minmax (default), percentile, kl, mse\n"
            "  --fallback auto|none   int8: keep the most sensitive layers float until --target-cos (0.99)\n"
            "  --target-cos C         int8: the cosine --fallback auto reaches on the calibration data\n"
            "  --float-dtype fp32|bf16 int8: the dtype of the layers that stay float (default fp32)\n"
            "  --qdq FILE             int8: also write the QDQ model (the interpreter's golden model)\n"
            "  --batch N[,N...]       set the batch (dim 0) of every graph input (default: 1 where dynamic);\n"
            "                         several sizes give one stage each in the same net\n"
            "  --input-shape NAME=1x3x224x224   fix an input's shape (repeatable)\n"
            "  --name NAME            net name in the .abm (default: the graph's name)\n"
            "  --estimate             print the cost model's cycles per layer\n"
            "  --csv FILE             write the cost model's per-layer table as CSV (batch, layer, name, op,\n"
            "                         split, tiles, cores, macs, est_cycles, est_compute, est_dma, is_matrix)\n"
            "  --time                 print the wall time of each compiler phase\n"
            "  --group auto|none      auto (default): layer groups where the cost model finds them\n"
            "                         cheaper (docs/backend.md); none: every layer on its own\n"
            "  --keep-activations     no reuse of activation memory: every activation listed in\n"
            "                         the .abm keeps its value after a run (atoll run --dump-tensors)\n"
            "  --dump-ir              print the IR after the passes and stop\n"
            "  --synthetic-weights    invent initializers whose external data file is missing\n"
            "  --no-passes            with --dump-ir: the IR as imported\n");
}

enum { DT_INT8 = 100 };   /* --dtype int8: a QDQ model compiled with float parts in --float-dtype */

static int parse_dtype(const char *s)
{
    if (!strcmp(s, "int8")) return DT_INT8;
    if (!strcmp(s, "f32") || !strcmp(s, "fp32")) return ISA_F32;
    if (!strcmp(s, "f16") || !strcmp(s, "fp16")) return ISA_F16;
    if (!strcmp(s, "bf16")) return ISA_BF16;
    return -1;
}

static void print_summary(const char *model, const char *out, const AtlChip *chip, const BkSummary *s, int dt)
{
    printf("%s -> %s: %d layers on %s (%d cores), batch %d, %s\n", model, out, s->nlayers, chip->name, s->cores,
           s->batch, isa_dtype_name(dt));
    printf("  estimated cycles : %llu (%.3f ms at %.0f MHz)\n", (unsigned long long)s->est_cycles,
           (double)s->est_cycles / chip->freq_mhz / 1000.0, chip->freq_mhz);
    printf("  instructions     : %llu\n", (unsigned long long)s->insns);
    printf("  weights          : %llu bytes\n", (unsigned long long)s->weight_bytes);
    printf("  activations      : %llu bytes peak (liveness packed) vs %llu bytes for all activation tensors\n",
           (unsigned long long)s->act_peak, (unsigned long long)s->act_sum);
    printf("  io               : %llu bytes\n", (unsigned long long)s->io_bytes);
}

/* The per-layer estimate of one stage as CSV rows (the header is added by
 * the caller once). */
static void estimate_csv(const BkSummary *s, StrBuf *b)
{
    for (int i = 0; i < s->nlayers; i++) {
        const BkLayerInfo *l = &s->layers[i];
        sbuf_printf(b, "%d,%d,", s->batch, l->layer_id);
        csv_put_field(b, l->name);
        sbuf_put(b, ",", 1);
        csv_put_field(b, l->op);
        sbuf_put(b, ",", 1);
        csv_put_field(b, l->split);
        sbuf_printf(b, ",%d,%d,%llu,%llu,%llu,%llu,%d\n", l->tiles, l->cores, (unsigned long long)l->macs,
                    (unsigned long long)l->est_cycles, (unsigned long long)l->est_compute, (unsigned long long)l->est_dma,
                    l->is_matrix);
    }
}

static void print_estimate(const BkSummary *s)
{
    printf("%5s  %-40s %-18s %-14s %6s %5s %12s %12s %12s %12s\n", "layer", "node", "op", "split", "tiles", "cores",
           "MACs", "est_cycles", "compute", "dma");
    for (int i = 0; i < s->nlayers; i++) {
        const BkLayerInfo *l = &s->layers[i];
        printf("%5d  %-40.40s %-18.18s %-14.14s %6d %5d %12llu %12llu %12llu %12llu\n", l->layer_id, l->name, l->op, l->split,
               l->tiles, l->cores, (unsigned long long)l->macs, (unsigned long long)l->est_cycles,
               (unsigned long long)l->est_compute, (unsigned long long)l->est_dma);
    }
}

/* Wall seconds per phase: import, passes, the backend's, write. */
enum { PH_IMPORT, PH_PASSES, PH_BACKEND, PH_WRITE = PH_BACKEND + BK_NPHASES, PH_COUNT };

static void print_times(const double *t)
{
    const char *names[PH_COUNT] = {"import", "passes"};
    for (int i = 0; i < BK_NPHASES; i++) names[PH_BACKEND + i] = bk_phase_names[i];
    names[PH_WRITE] = "write";
    double total = 0;
    printf("  compile time (wall):\n");
    for (int i = 0; i < PH_COUNT; i++) {
        printf("    %-22s %8.3f s\n", names[i], t[i]);
        total += t[i];
    }
    printf("    %-22s %8.3f s\n", "total", total);
}

int cmd_compile(int argc, char **argv)
{
    const char *model = NULL, *chipf = NULL, *out = NULL, *name = NULL, *csv = NULL, *v;
    StrBuf csv_text = {0};
    IrInputShape shapes[MAXOPT];
    int nshapes = 0, bad = 0, dump = 0, nopasses = 0, estimate = 0, batch = 0, dt = ISA_F32;
    int batches[MAXBATCH], nbatch = 0, keep = 0, timing = 0, group = BK_GROUP_AUTO, fdt = ISA_F32;
    const char *calib[MAXOPT], *qdq_out = NULL;
    int ncalib = 0;
    QzOptions qo;
    qz_options_default(&qo);
    double times[PH_COUNT] = {0}, t0;
    OnnxLoadOpts lopts = {0, 0, 0, 0};
    AtlErr e = {{0}};
    char opts[512] = "";
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--input-shape", &bad))) {
            if (nshapes == MAXOPT) { fprintf(stderr, "atoll compile: too many --input-shape options\n"); return 2; }
            if (ir_parse_input_shape(v, &shapes[nshapes++], &e)) { fprintf(stderr, "atoll compile: %s\n", e.msg); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chipf = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--name", &bad))) name = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--csv", &bad))) csv = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--dtype", &bad))) {
            if ((dt = parse_dtype(v)) < 0) { fprintf(stderr, "atoll compile: --dtype '%s': use fp32, fp16, bf16 or int8\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--float-dtype", &bad))) {
            if ((fdt = parse_dtype(v)) < 0 || fdt == DT_INT8) { fprintf(stderr, "atoll compile: --float-dtype '%s': use fp32, fp16 or bf16\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--calib", &bad))) {
            if (ncalib == MAXOPT) { fprintf(stderr, "atoll compile: too many --calib options\n"); return 2; }
            calib[ncalib++] = v;
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--qdq", &bad))) qdq_out = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--method", &bad))) {
            if ((qo.method = calib_method_parse(v)) < 0) { fprintf(stderr, "atoll compile: --method '%s': use minmax, percentile, kl or mse\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--target-cos", &bad))) {
            if (cli_parse_real("compile", "--target-cos", v, -1, 1, &qo.target_cos)) return 2;
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--fallback", &bad))) {
            if (!strcmp(v, "auto")) qo.fallback = QZ_FALLBACK_AUTO;
            else if (!strcmp(v, "none")) qo.fallback = QZ_FALLBACK_NONE;
            else { fprintf(stderr, "atoll compile: --fallback '%s': use auto or none\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--batch", &bad))) {
            const char *p = v;
            for (;;) {
                char *end;
                long b = strtol(p, &end, 10);
                if (end == p || (*end && *end != ',') || b < 1 || b > 65535 || nbatch == MAXBATCH) {
                    fprintf(stderr, "atoll compile: --batch '%s': numbers 1..65535, comma separated, at most %d\n", v, MAXBATCH);
                    return 2;
                }
                batches[nbatch++] = (int)b;
                if (!*end) break;
                p = end + 1;
            }
            batch = batches[0];
        } else if (bad) return 2;
        else if (!strcmp(argv[i], "--dump-ir")) dump = 1;
        else if (!strcmp(argv[i], "--no-passes")) nopasses = 1;
        else if (!strcmp(argv[i], "--estimate")) estimate = 1;
        else if (!strcmp(argv[i], "--time")) timing = 1;
        else if (!strcmp(argv[i], "--keep-activations")) keep = 1;
        else if ((v = cli_opt(argc, argv, &i, "--group", &bad))) {
            if (!strcmp(v, "auto")) group = BK_GROUP_AUTO;
            else if (!strcmp(v, "none")) group = BK_GROUP_NONE;
            else { fprintf(stderr, "atoll compile: --group '%s': use auto or none\n", v); return 2; }
        } else if (bad) return 2;
        else if (!strcmp(argv[i], "--synthetic-weights")) lopts.synthetic_weights = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "atoll compile: unknown option '%s' (see --help)\n", argv[i]); return 2; }
        else if (!model) model = argv[i];
        else { fprintf(stderr, "atoll compile: more than one model given ('%s')\n", argv[i]); return 2; }
    }
    if (!model) { fprintf(stderr, "atoll compile: no model given (see --help)\n"); return 2; }
    if (!dump && !chipf) { fprintf(stderr, "atoll compile: --chip FILE is required (or use --dump-ir)\n"); return 2; }
    if (!dump && !out) { fprintf(stderr, "atoll compile: -o FILE is required (or use --dump-ir)\n"); return 2; }
    if (dt == DT_INT8 && !ncalib) { fprintf(stderr, "atoll compile: --dtype int8 needs --calib DATA (or compile a quantised model)\n"); return 2; }
    if (dt != DT_INT8 && (ncalib || qdq_out)) { fprintf(stderr, "atoll compile: --calib and --qdq go with --dtype int8\n"); return 2; }
    if (dt == DT_INT8 && dump) { fprintf(stderr, "atoll compile: --dump-ir of an int8 model: write it with --qdq or atoll quantize\n"); return 2; }
    CliPath ins[MAXOPT + 2] = {{"model", model}, {"--chip", chipf}}, outs[] = {{"-o", out}, {"--csv", csv}, {"--qdq", qdq_out}};
    for (int k = 0; k < ncalib; k++) ins[k + 2] = (CliPath){"--calib", calib[k]};
    if (!dump && cli_check_outputs("compile", ins, 2 + ncalib, outs, 3)) return 2;
    AtlChip chip;
    if (!dump && cfg_load(chipf, &chip, &e)) { fprintf(stderr, "atoll compile: %s\n", e.msg); return 1; }
    if (!dump) lopts.synthetic_max_bytes = chip.dram_bytes;   /* invented weights must fit the chip */
    if (dump) {
        if (batch && model_batch_shapes(model, batch, 0, &lopts, shapes, &nshapes, MAXOPT, &e)) { fprintf(stderr, "atoll compile: %s\n", e.msg); return 1; }
        IrGraph g;
        int loaded = !model_load_opts(model, shapes, nshapes, &lopts, &g, &e);
        if (loaded && lopts.nsynthetic)
            fprintf(stderr, "atoll compile: note: %d initializers (%lld bytes) have synthetic values: their external data file is missing\n",
                    lopts.nsynthetic, (long long)lopts.synthetic_bytes);
        if (!loaded || (!nopasses && pass_run_all(&g, &e))) {
            fprintf(stderr, "atoll compile: %s\n", e.msg);
            ir_free(&g);
            return 1;
        }
        ir_print(&g, stdout);
        ir_free(&g);
        return 0;
    }
    if (nbatch == 0) batches[nbatch++] = 0;   /* 0: the model's batch, 1 where dynamic */
    /* the .abm records the SHA-256 of the ONNX file it came from */
    uint8_t hash[ATL_SHA256_BYTES];
    unsigned char *src = NULL;
    size_t srclen = 0;
    if (atl_read_file(model, &src, &srclen, &e)) { fprintf(stderr, "atoll compile: %s\n", e.msg); return 1; }
    atl_sha256(src, srclen, hash);
    free(src);
    /* --dtype int8: quantise the batch-1 model, then compile the QDQ model at every batch */
    PbBuf qbuf = {0};
    if (dt == DT_INT8) {
        qo.progress = stderr;
        qo.keep_float = NULL;
        if (qz_quantize_model(model, &lopts, shapes, nshapes, calib, ncalib, NULL, &qo, qdq_out, &qbuf, NULL, &e)) {
            fprintf(stderr, "atoll compile: %s\n", e.msg);
            return 1;
        }
    }
    BkSummary sums[MAXBATCH];
    memset(sums, 0, sizeof sums);
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    if (!w) { fprintf(stderr, "atoll compile: out of memory\n"); return 1; }
    int rc = 0;
    for (int bi = 0; bi < nbatch && rc == 0; bi++) {
        IrInputShape sh[MAXOPT];
        int nsh = nshapes;
        t0 = atl_clock_s();
        memcpy(sh, shapes, sizeof shapes[0] * (size_t)nshapes);
        if (model_batch_shapes(model, batches[bi] ? batches[bi] : 1, !batches[bi], &lopts, sh, &nsh, MAXOPT, &e)) {
            fprintf(stderr, "atoll compile: %s\n", e.msg);
            rc = 1;
            break;
        }
        IrGraph g;
        int loaded = dt == DT_INT8 ? !model_load_buffer(qbuf.p, qbuf.n, model, sh, nsh, &g, &e)
                                   : !model_load_opts(model, sh, nsh, &lopts, &g, &e);
        if (loaded && bi == 0 && lopts.nsynthetic)
            fprintf(stderr, "atoll compile: note: %d initializers (%lld bytes) have synthetic values: their external data file is missing\n",
                    lopts.nsynthetic, (long long)lopts.synthetic_bytes);
        times[PH_IMPORT] += atl_clock_s() - t0;
        t0 = atl_clock_s();
        if (loaded) loaded = !pass_run_all(&g, &e);
        times[PH_PASSES] += atl_clock_s() - t0;
        if (!loaded) {
            fprintf(stderr, "atoll compile: %s\n", e.msg);
            ir_free(&g);
            rc = 1;
            break;
        }
        if (dt == DT_INT8)
            snprintf(opts, sizeof opts, "--chip %s --dtype int8 --float-dtype %s --method %s --fallback %s%s%s", chip.name,
                     isa_dtype_name(fdt), calib_method_name(qo.method), qo.fallback == QZ_FALLBACK_AUTO ? "auto" : "none",
                     lopts.nsynthetic ? " --synthetic-weights" : "", group == BK_GROUP_NONE ? " --group none" : "");
        else
            snprintf(opts, sizeof opts, "--chip %s --dtype %s%s%s", chip.name, isa_dtype_name(dt),
                     lopts.nsynthetic ? " --synthetic-weights" : "", group == BK_GROUP_NONE ? " --group none" : "");
        if (batches[bi]) {
            size_t n = strlen(opts);
            snprintf(opts + n, sizeof opts - n, " --batch ");
            for (int k = 0; k < nbatch; k++) {
                n = strlen(opts);
                snprintf(opts + n, sizeof opts - n, "%s%d", k ? "," : "", batches[k]);
            }
        }
        BkOptions o;
        bk_options_default(&o);
        o.dtype = dt == DT_INT8 ? fdt : dt;
        o.net_name = name;
        o.options_text = opts;
        o.keep_activations = keep;
        o.group = group;
        o.source_hash = hash;
        BkSummary *sum = &sums[bi];
        if (bk_compile(&g, &chip, &o, w, sum, &e)) {
            fprintf(stderr, "atoll compile: %s: %s\n", model, e.msg);
            rc = 1;
        } else {
            if (csv) estimate_csv(sum, &csv_text);
            for (int i = 0; i < BK_NPHASES; i++) times[PH_BACKEND + i] += sum->phase_s[i];
        }
        ir_free(&g);
    }
    t0 = atl_clock_s();
    if (rc == 0 && abm_write_file(w, out, &e)) {
        fprintf(stderr, "atoll compile: %s\n", e.msg);
        rc = 1;
    }
    times[PH_WRITE] = atl_clock_s() - t0;
    if (rc == 0 && csv) {
        StrBuf all = {0};
        sbuf_printf(&all, "batch,layer,name,op,split,tiles,cores,macs,est_cycles,est_compute,est_dma,is_matrix\n");
        char *rows = sbuf_take(&csv_text);
        if (rows) sbuf_put(&all, rows, strlen(rows));
        free(rows);
        char *text = sbuf_take(&all);
        if (!text || atl_write_file_atomic(csv, text, strlen(text), &e)) {
            fprintf(stderr, "atoll compile: %s\n", text ? e.msg : "out of memory");
            rc = 1;
        }
        free(text);
    }
    sbuf_free(&csv_text);
    /* the summary only once the .abm is in place */
    pb_free(&qbuf);
    for (int bi = 0; bi < nbatch && rc == 0; bi++) {
        print_summary(model, out, &chip, &sums[bi], dt == DT_INT8 ? ISA_I8 : dt);
        if (estimate) print_estimate(&sums[bi]);
    }
    if (rc == 0 && timing) print_times(times);
    for (int bi = 0; bi < nbatch; bi++) bk_summary_free(&sums[bi]);
    abm_writer_free(w);
    return rc;
}

/* cmd_compare.c - `atoll compare MODEL.onnx MODEL.abm --input X.npy|IN.npz
 * [--expect REF.npz] [--chip CHIP] [--all] [--rtol R] [--atol A] [--min-cos C]
 * [--input-shape NAME=DIMS]... [--synthetic-weights]`: runs the model on
 * the reference interpreter and the compiled .abm on the simulated chip,
 * compares every model output (with --all also every intermediate the .abm
 * lists in DRAM whose storage was not reused later in the run) by cosine
 * similarity, max abs and max rel error (tools/compare.h), prints the
 * table, names the first tensor that diverges, and exits 1 if any output
 * fails its thresholds.
 *
 * The outputs come from a run through the host API (include/atoll.h:
 * device, firmware, simulator) and are checked against the interpreter on
 * the model as imported (so a wrong canonicalisation pass shows up too).
 * The host API shows only inputs and outputs, so with --all the
 * intermediates come from a second run of the same variant on the simulator
 * directly (tools/chip_exec.h, relocated as the firmware does), checked
 * against the interpreter on the canonicalised graph, whose tensor names
 * are the ones the backend wrote into the .abm.
 * With --expect (or arrays of an input .npz named like outputs), the
 * chip's and the interpreter's outputs are also compared with those of the
 * framework the model came from, in a second table.
 * Graph inputs are converted to the chip's dtypes (an int64 beyond int32
 * is an error naming the input and element; tools/chip_convert.h), outputs
 * back to the graph's; integer and bool outputs, and with --all integer
 * intermediates (a QDQ model's int8 tensors), must match exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/model_io.h"
#include "tools/chip_exec.h"
#include "tools/chip_convert.h"
#include "compiler/ops/ops.h"
#include "tools/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"
#include "util/file.h"

const char cmd_compare_summary[] = "compare a compiled model on the simulated chip with the reference interpreter";

#define MAXOPT 64

static const char usage_text[] =
    "usage: atoll compare MODEL.onnx MODEL.abm --input X.npy|IN.npz|NAME=X.npy [--input ...]\n"
    "                     [--expect REF.npz] [--chip CHIP] [--all] [--rtol R] [--atol A] [--min-cos C]\n"
    "                     [--input-shape NAME=1x3x224x224]... [--synthetic-weights] [--progress]\n"
    "Runs MODEL.abm on the simulated chip (host API, firmware) and MODEL.onnx on the reference\n"
    "interpreter with the same inputs and compares every output.\n"
    "  --input        X.npy for the only input, NAME=X.npy, or an .npz by array name; float\n"
    "                 arrays of any width feed float inputs (converted, with a note)\n"
    "  --expect F     the framework's outputs (PyTorch, ONNX Runtime) in an .npz by output\n"
    "                 name (or an .npy for a single output): the chip's and the interpreter's\n"
    "                 outputs are compared with them too. Arrays of an --input .npz named\n"
    "                 like outputs are taken as expected outputs the same way\n"
    "  --chip CHIP    a config file or a name; default: the chip MODEL.abm was compiled for\n"
    "  --all          also every intermediate tensor the .abm lists\n"
    "  --rtol R --atol A --min-cos C   thresholds (defaults by the chip's dtype: fp32\n"
    "                 |got-ref| <= 1e-4*max|ref| + 1e-4*|ref|; fp16/bf16 cosine >= 0.999)\n"
    "  --input-shape  fix or change an input's shape (default: as MODEL.abm was compiled)\n"
    "  --synthetic-weights  invent initializers whose external data file is missing\n"
    "  --progress     report progress on stderr even when it is not a terminal\n"
    "Exit status: 0 every output within tolerance, 1 an output fails or an error, 2 usage.\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

/* What the observer collects: reference values of the intermediates the
 * chip can give back, in the order the interpreter produced them. */
typedef struct Collect {
    ChipExec *x;
    const IrGraph *g;
    IrTensor *vals;      /* copies, in production order */
    int *tensor;         /* their IR tensor indices */
    int n, cap;
} Collect;

static int collect(void *ctx, int tensor, const IrTensor *v, AtlErr *e)
{
    Collect *c = ctx;
    if (c->g->t[tensor].is_output || chip_exec_find(c->x, v->name) < 0) return 0;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 32;
        IrTensor *a = realloc(c->vals, (size_t)cap * sizeof *a);
        if (!a) return atl_fail(e, "out of memory");
        c->vals = a;
        int *b = realloc(c->tensor, (size_t)cap * sizeof *b);
        if (!b) return atl_fail(e, "out of memory");
        c->tensor = b;
        c->cap = cap;
    }
    IrTensor *t = &c->vals[c->n];
    *t = *v;
    t->name = ir_strdup(v->name);
    t->data = NULL;
    if (!t->name || ir_alloc_data(t, e)) { free(t->name); return atl_fail(e, "out of memory"); }
    memcpy(t->data, v->data, ir_nbytes(v));
    c->tensor[c->n++] = tensor;
    return 0;
}

/* Position of the first tensor written later than position `pos` whose
 * DRAM bytes overlap those of the tensor at `pos` (its value is gone by the
 * end of the run), or -1. Views share storage without writing it. */
static int overwritten_by(const ChipExec *x, const Collect *c, int pos)
{
    int k = chip_exec_find(x, c->vals[pos].name);
    AbmTensor a = abm_tensor(&x->model.view, (uint32_t)k);
    for (int j = pos + 1; j < c->n; j++) {
        if (c->g->t[c->tensor[j]].is_view) continue; /* shares storage, writes nothing */
        int m = chip_exec_find(x, c->vals[j].name);
        AbmTensor b = abm_tensor(&x->model.view, (uint32_t)m);
        if (b.region == a.region && b.offset < a.offset + a.size && a.offset < b.offset + b.size) return j;
    }
    return -1;
}

/* The recorded compile options (the .abm metadata) that change the plan
 * of one variant, into opt: --group none, --group-max N, --group-weights,
 * --group-cslice, --sram-activations, --sram-weights, --no-halo-staging,
 * --no-shards, --no-chain-pack, --no-reorder. */
static void plan_options(const char *recorded, BkOptions *opt)
{
    if (!recorded) return;
    if (strstr(recorded, " --group none")) opt->group = BK_GROUP_NONE;
    const char *gm = strstr(recorded, " --group-max ");
    if (gm) opt->group_max = atoi(gm + strlen(" --group-max "));
    if (strstr(recorded, " --sram-activations never")) opt->sram_acts = BK_SRAM_ACTS_NEVER;
    if (strstr(recorded, " --sram-activations bands")) opt->sram_acts = BK_SRAM_ACTS_BANDS;
    if (strstr(recorded, " --sram-activations rows")) opt->sram_acts = BK_SRAM_ACTS_ROWS;
    if (strstr(recorded, " --group-weights resident")) opt->group_weights = BK_GW_RESIDENT;
    if (strstr(recorded, " --group-weights stream")) opt->group_weights = BK_GW_STREAM;
    if (strstr(recorded, " --group-cslice never")) opt->group_cslice = BK_CS_NEVER;
    if (strstr(recorded, " --group-cslice only")) opt->group_cslice = BK_CS_ONLY;
    if (strstr(recorded, " --sram-weights never")) opt->sram_weights = BK_SRAM_NEVER;
    if (strstr(recorded, " --sram-weights always")) opt->sram_weights = BK_SRAM_ALWAYS;
    if (strstr(recorded, " --no-halo-staging")) opt->no_halo_stage = 1;
    if (strstr(recorded, " --no-shards")) opt->no_shards = 1;
    if (strstr(recorded, " --no-chain-pack")) opt->no_chain_pack = 1;
    if (strstr(recorded, " --no-reorder")) opt->no_reorder = 1;
}

/* Layer id (the `layer` tag of its instructions) of the node producing each
 * IR tensor of gp, found by compiling gp again for the chip and dtype of the
 * given image (and its recorded options that change the plan) and checking
 * that the instruction streams come out byte for byte the same; *layer_of
 * stays NULL (no mapping) when they do not. */
static int layer_map(const IrGraph *gp, const AtlChip *chip, const ChipExec *x, int **layer_of, AtlErr *e)
{
    *layer_of = NULL;
    const AbmView *v = &x->model.view;
    AbmVariant st = abm_variant(v, x->variant);
    if (!st.tensor_count) return 0;
    uint32_t adt = abm_tensor(v, st.tensor_first).dtype;
    BkOptions opt;
    bk_options_default(&opt);
    opt.dtype = adt == ABM_DTYPE_FP16 ? ISA_F16 : adt == ABM_DTYPE_BF16 ? ISA_BF16 : ISA_F32;
    plan_options(abm_meta(v).options, &opt);
    uint8_t *abm = NULL;
    size_t len = 0;
    BkSummary sum;
    AbmModel m;
    memset(&m, 0, sizeof m);
    memset(&sum, 0, sizeof sum);
    int same = 0;
    if (!chip_compile_graph(gp, chip, &opt, 0, &abm, &len, &sum, e) && !abm_load_buffer(&m, abm, len, cfg_fingerprint(chip), 0, e)
        && m.view.n_variants > 0) {
        AbmVariant s2 = abm_variant(&m.view, 0);
        same = s2.core_count == st.core_count;
        for (uint32_t c = 0; same && c < st.core_count; c++)
            for (uint32_t k = 0; same && k < ABM_ENGINES; k++) {
                AbmStream a = abm_stream(v, x->variant, c, k), b = abm_stream(&m.view, 0, c, k);
                same = a.size == b.size && (!a.size || !memcmp(a.data, b.data, a.size));
            }
    }
    int *map = same ? malloc(((size_t)gp->nt + 1) * sizeof *map) : NULL;
    if (map) {
        for (int t = 0; t < gp->nt; t++) map[t] = -1;
        /* a layer is its node, or a layer group's member nodes (the
         * member list: "name\top" lines): each writes its outputs there */
        for (int i = 0; i < sum.nlayers; i++)
            for (int n = 0; n < gp->nn; n++) {
                const IrNode *node = &gp->nodes[n];
                if (node->dead || !node->name) continue;
                int mine = !strcmp(node->name, sum.layers[i].name);
                size_t len = strlen(node->name);
                for (const char *m = sum.layers[i].members; m && *m && !mine; m = strchr(m, '\n') ? strchr(m, '\n') + 1 : "")
                    mine = !strncmp(m, node->name, len) && m[len] == '\t';
                if (!mine) continue;
                for (int k = 0; k < node->nout; k++) if (node->out[k] >= 0) map[node->out[k]] = sum.layers[i].layer_id;
            }
        /* a node absorbed into a layer (an activation after a conv) has no
         * layer of its own: its result is stored by the layer of its input */
        for (int n = 0; n < gp->nn; n++) {
            const IrNode *node = &gp->nodes[n];
            if (node->dead || node->nin < 1 || node->in[0] < 0) continue;
            for (int k = 0; k < node->nout; k++)
                if (node->out[k] >= 0 && map[node->out[k]] < 0) map[node->out[k]] = map[node->in[0]];
        }
    }
    *layer_of = map;
    abm_model_free(&m);
    bk_summary_free(&sum);
    free(abm);
    if (e) e->msg[0] = 0; /* a failed recompile only means no layer map */
    return 0;
}

/* Compares the collected intermediates with the chip's (x has run once in
 * full). One whose storage a later tensor reuses is read from a run
 * stopped when the layer that produced it ended (layers end in barriers,
 * so nothing later has written yet); *recovered counts those. */
static int compare_intermediates(ChipExec *x, const Collect *col, const IrGraph *gp, const AtlChip *chip,
                                 const IrTensor *in, int nin, const CmpThresholds *user, CmpReport *rep,
                                 int *recovered, CliProgress *pr, AtlErr *e)
{
    int *layer_of = NULL, rc = -1;
    if (layer_map(gp, chip, x, &layer_of, e)) return -1;
    const AtlSimStats *full = sim_stats(x->sim);
    int nlayers = full->nlayers;
    /* copied: the stopped runs replace the simulator */
    /* a layer's stores may be tagged with, or still be in flight behind,
     * an earlier layer's work: stop when every layer up to it has ended,
     * but before the layer that overwrites the tensor starts */
    uint64_t *layer_end = calloc((size_t)nlayers + 1, sizeof *layer_end);
    uint64_t *layer_start = calloc((size_t)nlayers + 1, sizeof *layer_start);
    if (!layer_end || !layer_start) { free(layer_end); free(layer_start); free(layer_of); return atl_fail(e, "out of memory"); }
    for (int l = 0; l < nlayers; l++) {
        layer_end[l] = full->layers[l].used ? full->layers[l].last : 0;
        if (l > 0 && layer_end[l] && layer_end[l - 1] > layer_end[l]) layer_end[l] = layer_end[l - 1];
        layer_start[l] = full->layers[l].used ? full->layers[l].first : 0;
    }
    uint64_t cut = 0; /* the cycle the simulator was last stopped at; 0: a full run */
    for (int i = 0; i < col->n; i++) {
        cli_progress(pr, "--all: intermediate %d of %d (%.60s)", i + 1, col->n, col->vals[i].name);
        int j = overwritten_by(x, col, i);
        const char *by = j >= 0 ? col->vals[j].name : NULL;
        int l = layer_of ? layer_of[col->tensor[i]] : -1;
        int lo = j >= 0 && layer_of ? layer_of[col->tensor[j]] : -1;
        uint64_t stop = l >= 0 && l < nlayers ? layer_end[l] : 0;
        /* the layer that reuses the storage started before this one's work
         * had ended: no instant holds the value */
        int overlap = stop && lo >= 0 && lo < nlayers && layer_start[lo] && stop >= layer_start[lo];
        if (by && (!stop || overlap)) {
            char why[96];
            snprintf(why, sizeof why, "%s '%.50s'%s", overlap ? "overlapped by" : "storage reused by", by,
                     overlap ? "; use --keep-activations" : "");
            if (cmp_report_skip(rep, col->vals[i].name, 0, why, e)) goto out;
            continue;
        }
        uint64_t want = by ? stop : 0;
        if (want != cut) {
            if (chip_exec_run_until(x, in, nin, want, e)) {
                if (want) atl_err_prefix(e, "simulated chip stopped at cycle %llu (layer %d)", (unsigned long long)want, l);
                else atl_err_prefix(e, "simulated chip (--all run)");
                goto out;
            }
            cut = want;
        }
        IrTensor got;
        if (chip_exec_read(x, col->vals[i].name, &got, e)) goto out;
        /* integer tensors (a QDQ model's int8 ones among them) must be equal, as outputs */
        CmpThresholds th = *user;
        if (!op_dtype_is_float(col->vals[i].dtype) && !th.set_atol) { th.set_atol = 1; th.atol = 0; }
        int r = cmp_report_add(rep, col->vals[i].name, 0, got.dtype, &col->vals[i], &got, &th, e);
        ir_tensor_free_contents(&got);
        if (r) goto out;
        if (by) {
            (*recovered)++;
            CmpRow *row = &rep->rows[rep->n - 1];
            if (row->pass) snprintf(row->note, sizeof row->note, "read at cycle %llu (end of layer %d)", (unsigned long long)stop, l);
        }
    }
    rc = 0;
out:
    free(layer_end);
    free(layer_start);
    free(layer_of);
    return rc;
}

/* The expected output for output `name`, or NULL. */
static const IrTensor *expected_of(const char *name, const IrTensor *exp, int nexp)
{
    for (int i = 0; i < nexp; i++) if (!strcmp(exp[i].name, name)) return &exp[i];
    return NULL;
}

/* Expected outputs without --expect: the arrays of the input .npz files
 * named like the model's outputs (a reference file holds both). */
static int expected_from_inputs(const IrGraph *g, const char *const *inputs, int nin, IrTensor **exp, int *nexp, AtlErr *e)
{
    const char *npz[MAXOPT];
    int n = 0;
    for (int i = 0; i < nin; i++) {
        size_t l = strlen(inputs[i]);
        if (l > 4 && !strcmp(inputs[i] + l - 4, ".npz") && !strchr(inputs[i], '=')) npz[n++] = inputs[i];
    }
    if (!n) return 0;
    if (model_read_outputs("compare", g, npz, n, exp, nexp, e)) return -1;
    for (int i = 0; i < *nexp; i++)
        fprintf(stderr, "atoll compare: note: '%s' in the inputs is an output of the model: compared as its expected "
                        "value (as with --expect)\n", (*exp)[i].name);
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    const char *model = NULL, *abm_path = NULL, *chip_arg = NULL, *expect = NULL, *inputs[MAXOPT], *v;
    IrInputShape shapes[MAXOPT];
    int nin = 0, nshapes = 0, bad = 0, all = 0;
    CliProgressMode pmode = CLI_PROGRESS_AUTO;
    CmpThresholds user;
    memset(&user, 0, sizeof user);
    OnnxLoadOpts lopts = {0, 0, 0, 0};
    AtlErr e = {{0}};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--input-shape", &bad))) {
            if (nshapes == MAXOPT) { fprintf(stderr, "atoll compare: too many --input-shape options\n"); return 2; }
            if (ir_parse_input_shape(v, &shapes[nshapes++], &e)) { fprintf(stderr, "atoll compare: %s\n", e.msg); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--input", &bad))) {
            if (nin == MAXOPT) { fprintf(stderr, "atoll compare: too many --input options\n"); return 2; }
            inputs[nin++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_arg = v;
        else if ((v = cli_opt(argc, argv, &i, "--expect", &bad))) expect = v;
        else if ((v = cli_opt(argc, argv, &i, "--rtol", &bad))) {
            if (cli_parse_real("compare", "--rtol", v, 0, HUGE_VAL, &user.rtol)) return 2;
            user.set_rtol = 1;
        } else if ((v = cli_opt(argc, argv, &i, "--atol", &bad))) {
            if (cli_parse_real("compare", "--atol", v, 0, HUGE_VAL, &user.atol)) return 2;
            user.set_atol = 1;
        } else if ((v = cli_opt(argc, argv, &i, "--min-cos", &bad))) {
            if (cli_parse_real("compare", "--min-cos", v, 0, 1, &user.min_cos)) return 2;
            user.set_cos = 1;
        } else if (bad) return 2;
        else if (!strcmp(argv[i], "--all")) all = 1;
        else if (!strcmp(argv[i], "--synthetic-weights")) lopts.synthetic_weights = 1;
        else if (!strcmp(argv[i], "--progress")) pmode = CLI_PROGRESS_ON;
        else if (argv[i][0] == '-') return cli_bad_option("compare", argv[i], usage_text);
        else if (!model) model = argv[i];
        else if (!abm_path) abm_path = argv[i];
        else { fprintf(stderr, "atoll compare: unexpected argument '%s'\n", argv[i]); return 2; }
    }
    if (!model || !abm_path) { fprintf(stderr, "atoll compare: give MODEL.onnx and MODEL.abm\n"); usage(stderr); return 2; }
    if (!nin) { fprintf(stderr, "atoll compare: no --input given\n"); usage(stderr); return 2; }

    int rc = 1;
    IrGraph g, gp;
    IrTensor *tin = NULL, *ref = NULL, *chip_in = NULL, *exp = NULL;
    int ntin = 0, nchip_in = 0, nexp = 0;
    unsigned char *abm = NULL;
    size_t abm_len = 0;
    AtlChip chip;
    char chip_path[4096];
    ChipExec x;
    HostExec h;
    CmpReport rep = {0}, vs = {0};
    Collect col;
    CliProgress pr;
    int recovered = 0, nvs = 0;
    memset(&x, 0, sizeof x);
    memset(&h, 0, sizeof h);
    memset(&col, 0, sizeof col);
    ir_init(&g);
    ir_init(&gp);
    cli_progress_init(&pr, "compare", pmode);
    if (cli_load_chip("compare", chip_arg, abm_path, &chip, chip_path, sizeof chip_path)) { rc = 1; goto done; }
    cli_progress(&pr, "loading %s", abm_path);
    if (atl_read_file(abm_path, &abm, &abm_len, &e)) goto done;
    if (host_exec_open(&h, &chip, abm, abm_len, NULL, &e)) { atl_err_prefix(&e, "%s", abm_path); goto done; }
    /* dynamic dimensions as compiled, unless given */
    if (host_exec_input_shapes(&h, shapes, &nshapes, MAXOPT, &e)) goto done;
    cli_progress(&pr, "importing %s", model);
    if (model_load_opts("compare", model, shapes, nshapes, &lopts, &g, &e)) goto done;
    if (model_load_opts("compare", model, shapes, nshapes, &lopts, &gp, &e) || pass_run_all(&gp, &e)) goto done;
    if (model_read_inputs("compare", &g, inputs, nin, &tin, &ntin, &e)) goto done;
    if (expect ? model_read_outputs("compare", &g, &expect, 1, &exp, &nexp, &e)
               : expected_from_inputs(&g, inputs, nin, &exp, &nexp, &e)) goto done;
    if (all && chip_exec_open(&x, &chip, abm, abm_len, SIM_MODE_FULL, 0, &e)) { atl_err_prefix(&e, "%s", abm_path); goto done; }
    /* the chip takes its inputs in its own dtype */
    chip_in = calloc((size_t)ntin + 1, sizeof *chip_in);
    if (!chip_in) { atl_fail(&e, "out of memory"); goto done; }
    for (int i = 0; i < ntin; i++) {
        int k = ir_find(&g, tin[i].name);
        if (k < 0 || !g.t[k].is_input) continue;
        int dt = host_exec_input_dtype(&h, tin[i].name);
        if (chip_convert_input(&tin[i], dt ? dt : tin[i].dtype, &chip_in[nchip_in], &e)) goto done;
        nchip_in++;
    }
    cli_progress(&pr, "reference interpreter");
    if (interp_run(&g, tin, ntin, &ref, &e)) { atl_err_prefix(&e, "reference interpreter"); goto done; }
    col.x = &x;
    col.g = &gp;
    if (all) {
        IrTensor *outs = NULL;
        cli_progress(&pr, "--all: reference interpreter on the canonicalised graph");
        if (interp_run_observed(&gp, tin, ntin, &outs, collect, &col, &e)) { atl_err_prefix(&e, "reference interpreter (canonicalised graph)"); goto done; }
        interp_free_outputs(outs, gp.nout);
    }
    cli_progress(&pr, "simulated chip");
    if (host_exec_run(&h, chip_in, nchip_in, &e)) goto done;
    cli_progress(&pr, "--all: simulated chip");
    if (all && chip_exec_run(&x, chip_in, nchip_in, &e)) { atl_err_prefix(&e, "simulated chip (--all run)"); goto done; }
    if (all && compare_intermediates(&x, &col, &gp, &chip, chip_in, nchip_in, &user, &rep, &recovered, &pr, &e)) goto done;
    for (int i = 0; i < g.nout; i++) {
        IrTensor got;
        if (host_exec_output(&h, ref[i].name, &got, &e)) goto done;
        /* back to the graph's dtype; graph integers and bools compare exactly */
        int chip_dt = got.dtype;
        CmpThresholds th = user;
        if (!op_dtype_is_float(ref[i].dtype) && !th.set_atol) { th.set_atol = 1; th.atol = 0; }
        if (chip_convert_output(&got, ref[i].dtype, &e)) { ir_tensor_free_contents(&got); goto done; }
        int r = cmp_report_add(&rep, ref[i].name, 1, chip_dt, &ref[i], &got, &th, &e);
        /* both against the framework's outputs */
        const IrTensor *want = expected_of(ref[i].name, exp, nexp);
        char label[600];
        if (!r && want) {
            snprintf(label, sizeof label, "%s [chip]", ref[i].name);
            r = cmp_report_add(&vs, label, 1, chip_dt, want, &got, &th, &e);
            snprintf(label, sizeof label, "%s [interpreter]", ref[i].name);
            if (!r) r = cmp_report_add(&vs, label, 1, ref[i].dtype, want, &ref[i], &th, &e);
            nvs++;
        }
        ir_tensor_free_contents(&got);
        if (r) goto done;
    }
    cli_progress_end(&pr);
    AtlProfile prof;
    if (atl_profile(h.model, &prof) == ATL_OK)
        printf("%s on %s through the host API: %llu cycles (+%llu firmware), %.1f%% matrix-unit busy\n", abm_path, chip_path,
               (unsigned long long)prof.cycles, (unsigned long long)prof.fw_cycles, 100 * prof.utilisation[1]);
    if (all) {
        int unlisted = 0;
        for (int t = 0; t < gp.nt; t++) {
            const IrTensor *x2 = &gp.t[t];
            if (x2->producer >= 0 && !x2->is_output && !x2->data && chip_exec_find(&x, x2->name) < 0) unlisted++;
        }
        printf("--all: %d intermediates in DRAM (%d read from runs stopped after their layer: storage reused later); "
               "%d not listed in the .abm (fused into a layer, views, never stored, or kept in LMEM or SRAM: "
               "compile with --keep-activations to list them all)\n", col.n, recovered, unlisted);
    }
    cmp_report_print(&rep, stdout);
    if (nvs) {
        printf("against the expected outputs (%s): %d of %d outputs have one\n", expect ? expect : "arrays of the inputs named like outputs",
               nvs, g.nout);
        cmp_report_print(&vs, stdout);
    } else if (expect) {
        printf("against the expected outputs (%s): none of its arrays is named like an output of the model\n", expect);
    }
    rc = cmp_report_failed_outputs(&rep) || cmp_report_failed_outputs(&vs) || (expect && !nvs) ? 1 : 0;
done:
    cli_progress_end(&pr);
    if (rc && e.msg[0]) fprintf(stderr, "atoll compare: %s\n", e.msg);
    cmp_report_free(&rep);
    cmp_report_free(&vs);
    for (int i = 0; i < col.n; i++) ir_tensor_free_contents(&col.vals[i]);
    free(col.vals);
    free(col.tensor);
    chip_exec_close(&x);
    host_exec_close(&h);
    free(abm);
    interp_free_outputs(ref, g.nout);
    model_free_inputs(chip_in, nchip_in);
    model_free_inputs(tin, ntin);
    model_free_inputs(exp, nexp);
    ir_free(&g);
    ir_free(&gp);
    return rc;
}

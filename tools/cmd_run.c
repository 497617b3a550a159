/* cmd_run.c - `atoll run`: run a compiled model on the simulated chip
 * through the host API (include/atoll.h), i.e. through the device's
 * firmware exactly as an application would. Inputs and outputs are
 * .npy/.npz files; the variant is chosen from the input shapes. An array of
 * another width than its input is converted by the API's atl_convert
 * (floats of any width into a float input, integers into an integer input
 * when every value fits), with a note; --timing-only runs the simulator's
 * timing mode (inputs optional, no values computed). --profile prints the
 * per-layer table: the compiler's name, op and estimate (when compiled
 * with --layer-info) next to the simulated cycles, MACs, DRAM bytes and
 * engine busy time, at most 100 columns wide.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atoll.h"
#include "isa/isa.h"
#include "tools/cli.h"
#include "util/file.h"

const char cmd_run_summary[] = "run a compiled model (.abm) on the simulated chip through firmware and host API";

#define MAXIN 64

static const char usage_text[] =
    "usage: atoll run MODEL.abm [--chip CHIP] --input X.npy|IN.npz|NAME=X.npy [--input ...] [--net NAME]\n"
    "                 [--output OUT.npz|OUT.npy] [--trace T.json] [--stats S.json] [--csv L.csv] [--profile]\n"
    "                 [--timing-only] [--dump-tensors ALL.npz] [--fw-heap BYTES] [--max-cycles N]\n"
    "                 [--max-work N] [--progress]\n"
    "\n"
    "Loads MODEL.abm into a simulated device (the firmware validates, relocates and\n"
    "places it), runs net NAME (default: the first) on the inputs and writes every\n"
    "output of the variant that ran.\n"
    "  --chip CHIP  a config file or a name (a1 = configs/a1.ini, or the installed\n"
    "               share/atoll/configs/a1.ini); default: the chip the model was compiled for\n"
    "  --input      X.npy for the variant's only input, NAME=X.npy for input NAME, or an .npz\n"
    "               with one member per input (repeatable); an array of another width is\n"
    "               converted with a note: floats (float16/32/64) into any float input\n"
    "               (bfloat16 too), integers and bools into an integer input when every\n"
    "               value fits; the shapes choose the variant (batch size). An .npz member\n"
    "               named like an output is skipped unread; one named like an input is\n"
    "               read only if its declared size fits that input\n"
    "  --output     .npz with one member per output, or .npy for a single output\n"
    "               (a bfloat16 output is written as float32)\n"
    "  --trace      Chrome/Perfetto trace of the run (a staged schedule: a slice per stage\n"
    "               on each cluster)\n"
    "  --stats      the simulator's statistics of the run (JSON)\n"
    "  --csv        the per-layer table of the run as CSV (layer, first, last, cycles,\n"
    "               insns, macs, dma_bytes, dram_bytes, busy_dma, busy_mat, busy_vec, sync,\n"
    "               bound)\n"
    "  --profile    print cycles, per-engine utilisation and the per-layer table (name,\n"
    "               op, bound, the cost model's estimate when the model was compiled with\n"
    "               --layer-info, simulated cycles, MACs, DRAM bytes, engine busy); for a\n"
    "               staged schedule also one row per stage (its layers, micro-batch,\n"
    "               estimated and simulated cycles, MACs, DRAM bytes, matrix-unit\n"
    "               utilisation)\n"
    "  --timing-only  the simulator's timing mode: the same cycles and profile, no values\n"
    "               computed (no --output); --input optional (then the first variant runs)\n"
    "  --dump-tensors  every activation and output of the variant after the run, as\n"
    "               found in device memory (to compare intermediates with `atoll\n"
    "               interp`); a tensor whose dtype .npy lacks, or whose layout is\n"
    "               padded, is written as its raw bytes (uint8, 1-D)\n"
    "  --fw-heap    memory of the control processor for the firmware, 4096 .. 2^32\n"
    "               bytes (default 16 MiB)\n"
    "  --max-cycles stop the run with a fault after N cycles (1 .. 2^62)\n"
    "  --max-work   stop the run with a fault after N units of host work (elements\n"
    "               moved or computed; default 2^36 or ATOLL_MAX_SIM_WORK)\n"
    "  --progress   report progress on stderr even when it is not a terminal\n"
    "Exit status: 0 ok, 1 error (message names the cause), 2 usage.\n";

static const char *const short_dtype[] = { "int8", "uint8", "int16", "int32", "fp16", "bf16", "fp32" };

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static void shape_text(char *buf, size_t cap, int ndim, const uint32_t *dims)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, i ? ",%u" : "%u", dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

static int write_text(const char *path, const char *text)
{
    AtlErr e;
    if (atl_write_file_atomic(path, text, strlen(text), &e)) {
        fprintf(stderr, "atoll run: %s\n", e.msg);
        return -1;
    }
    return 0;
}

/* ---- the profile ---- */

/* A layer name in at most w characters. Exported names repeat each module
 * in its child's ("/features/features.12/conv/conv.0/conv.0.0/Conv"): a path
 * component that the next one starts with is dropped first
 * ("/features.12/conv.0.0/Conv"); what is still too long loses its middle,
 * never its end, which is what tells layers apart. */
static void short_name(const char *s, int w, char *out)
{
    char buf[512];
    size_t k = 0;
    for (const char *p = s; *p && k < sizeof buf - 1;) {
        const char *slash = strchr(p + 1, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);   /* "/comp" */
        int redundant = slash && *p == '/' && len > 1 && !strncmp(slash + 1, p + 1, len - 1) &&
                        (slash[len] == '.' || slash[len] == '_');
        if (!redundant) {
            size_t take = len < sizeof buf - 1 - k ? len : sizeof buf - 1 - k;
            memcpy(buf + k, p, take);
            k += take;
        }
        p += len;
    }
    buf[k] = 0;
    int n = (int)k;
    if (n <= w) { snprintf(out, (size_t)w + 1, "%s", buf); return; }
    int head = (w - 3) / 3, tail = w - 3 - head;
    snprintf(out, (size_t)w + 1, "%.*s...%s", head, buf, buf + n - tail);
}

/* 1234567 -> "1.2M" (K, M, G, T), in at most 6 characters. */
static void human(uint64_t v, const char *unit, char *out, size_t cap)
{
    static const char *const pre[] = {"", "K", "M", "G", "T"};
    double x = (double)v;
    int k = 0;
    while (x >= 999.5 && k < 4) { x /= 1000; k++; }
    if (k == 0) snprintf(out, cap, "%llu%s", (unsigned long long)v, unit);
    else snprintf(out, cap, x < 9.95 ? "%.1f%s%s" : "%.0f%s%s", x, pre[k], unit);
}

static const AtlLayerInfo *layer_row(const AtlVariantInfo *st, uint32_t id)
{
    for (uint32_t i = 0; i < st->n_layers; i++) if (st->layers[i].layer == id) return &st->layers[i];
    return NULL;
}

/* One row of the --profile table: a layer (or group), or a member of a
 * group (indented, no id) with its share of the group's span as cycles;
 * the engines' busy cycles as a share of room x 100 (the layer's span x
 * cores: a group's members' add up to the group's). */
static void profile_row(const AtlLayerProfile *l, const AtlLayerInfo *r, double room)
{
    char id[8] = "", name[32], op[16], est[24], macs[16], dram[16];
    if (l->member < 0) snprintf(id, sizeof id, "%u", l->layer);
    char label[300];
    snprintf(label, sizeof label, "%s%s", l->member < 0 ? "" : "  ", r ? r->name : l->member < 0 ? "-" : "member");
    short_name(label, 28, name);
    if (l->member >= 0 && !r) snprintf(name, sizeof name, "  member %d", l->member);
    snprintf(op, sizeof op, "%.9s", r ? r->op : "-");
    if (r && r->est_cycles) snprintf(est, sizeof est, "%llu", (unsigned long long)r->est_cycles);
    else snprintf(est, sizeof est, "-");
    human(l->macs, "", macs, sizeof macs);
    human(l->dram_bytes, "B", dram, sizeof dram);
    printf(" %3s %-28s %-9s %-7s %8s %8llu %6s %6s %3.0f%% %3.0f%% %3.0f%%\n", id, name, op, l->bound ? l->bound : "-", est,
           (unsigned long long)l->cycles, macs, dram, room > 0 ? (double)l->busy_mat / room : 0.0,
           room > 0 ? (double)l->busy_vec / room : 0.0, room > 0 ? (double)l->busy_dma / room : 0.0);
}

static void print_profile(const AtlProfile *p, const AtlVariantInfo *st)
{
    static const char *const eng[ATL_ENGINES] = { "dma", "matrix", "vector" };
    printf("profile: %llu cycles (%.6g s) + %llu firmware, %llu MACs, %llu DRAM bytes, %u cores\n",
           (unsigned long long)p->cycles, p->seconds, (unsigned long long)p->fw_cycles, (unsigned long long)p->macs,
           (unsigned long long)p->dram_bytes, p->cores);
    printf("  %-7s %12s %12s %8s\n", "engine", "busy", "stall", "util");
    for (int g = 0; g < ATL_ENGINES; g++)
        printf("  %-7s %12llu %12llu %7.1f%%\n", eng[g], (unsigned long long)p->busy[g], (unsigned long long)p->stall[g],
               100.0 * p->utilisation[g]);
    if (!p->n_layers) return;
    /* 98 columns: id, name, op, bound, estimate, simulated span, MACs, DRAM bytes, busy % of span x cores */
    printf(" %3s %-28s %-9s %-7s %8s %8s %6s %6s %4s %4s %4s\n", "id", "layer", "op", "bound", "est", "cycles", "MACs",
           "DRAM", "mat", "vec", "dma");
    uint32_t cores = st->cores ? st->cores : 1;
    for (uint32_t i = 0; i < p->n_layers; i++) {
        const AtlLayerProfile *l = &p->layers[i];
        uint64_t span = l->last > l->first ? l->last - l->first : 0;
        double room = (double)span * cores / 100.0;
        profile_row(l, layer_row(st, l->layer), room);
        /* a group's members under it: their shares of its span and engine time */
        for (uint32_t k = 0; k < p->n_members; k++)
            if (p->members[k].layer == l->layer)
                profile_row(&p->members[k], layer_row(st, isa_member_tag(l->layer, (unsigned)p->members[k].member)), room);
    }
    if (!st->n_layers)
        printf("  (layer names, ops and the cost model's estimates: compile the model with --layer-info)\n");
    if (!p->n_stages) return;
    /* the stages of a staged schedule: cycles = the core-cycles their layers
     * held / the stage's cores; MAC util = useful matrix-unit cycles / held */
    printf(" %5s %-9s %3s %5s %5s %9s %9s %9s %6s %6s %6s  %s\n", "stage", "layers", "mb", "inst", "cores", "est", "cycles",
           "span", "MACs", "DRAM", "util", "reads");
    for (uint32_t i = 0; i < p->n_stages; i++) {
        const AtlStageProfile *g = &p->stages[i];
        const AtlStageInfo *r = &st->stages[i];
        char ids[24], macs[16], dram[16], reads[40];
        snprintf(ids, sizeof ids, "%u-%u", r->first_layer, r->first_layer + r->n_layers - 1);
        human(g->macs, "", macs, sizeof macs);
        human(g->dram_bytes, "B", dram, sizeof dram);
        short_name(r->input[0] ? r->input : "the inputs", 30, reads);
        printf(" %5u %-9s %3u %5u %5u %9llu %9llu %9llu %6s %6s %5.1f%%  %s\n", g->stage, ids, r->micro_batch, r->instances,
               r->cores, (unsigned long long)r->est_cycles, (unsigned long long)g->cycles,
               (unsigned long long)(g->last - g->first), macs, dram, 100.0 * g->mac_util, reads);
    }
}

/* ---- inputs ---- */

typedef struct Input {
    const char *file;
    AtlArray a;
    void *conv;              /* converted data (owned) or NULL */
} Input;

static int is_output_name(const AtlNetInfo *net, const char *name);

/* Which .npz members to read: the net's inputs, each no larger than its
 * largest variant needs at up to 8 bytes per element (the widest .npy dtype
 * converted into an input); outputs (a reference file) are skipped unread
 * with a note; any other name is refused. */
static int select_inputs(void *ctx, const char *key, uint64_t *max_bytes, char *msg, size_t cap)
{
    const AtlNetInfo *net = ctx;
    uint64_t most = 0;
    int found = 0;
    for (uint32_t k = 0; k < net->n_variants; k++)
        for (uint32_t j = 0; j < net->variants[k].n_inputs; j++) {
            const AtlTensorInfo *t = &net->variants[k].inputs[j];
            if (strcmp(t->name, key)) continue;
            uint64_t n = 1;
            for (int d = 0; d < t->ndim; d++) n *= t->dims[d];
            if (n > most) most = n;
            found = 1;
        }
    if (found) { *max_bytes = most * 8 + 65536 + 12; return 1; }
    if (is_output_name(net, key)) {
        fprintf(stderr, "atoll run: note: array '%s' is an output of net '%s'; not used as an input\n", key, net->name);
        return 0;
    }
    snprintf(msg, cap, "net '%s' has no input named '%s'", net->name, key);
    return -1;
}

/* Reads every --input into arrays: X.npy (name NULL: the only input),
 * NAME=X.npy, or an .npz (the members select_inputs takes, by name). */
static int read_inputs(const char *const *specs, int nspecs, const AtlNetInfo *net, Input **out, int *n)
{
    Input *list = NULL;
    int count = 0;
    char msg[1024];
    for (int i = 0; i < nspecs; i++) {
        const char *spec = specs[i], *eq = strchr(spec, '='), *file = eq ? eq + 1 : spec;
        AtlArray *got = NULL;
        uint32_t m = 0;
        AtlStatus s;
        if (!eq && ends_with(spec, ".npz")) s = atl_npz_load_only(spec, select_inputs, (void *)net, &got, &m, msg, sizeof msg);
        else {
            got = calloc(1, sizeof *got);
            m = 1;
            s = got ? atl_npy_load(file, got, msg, sizeof msg) : ATL_ERR_HOST_MEMORY;
            if (!s && eq) {
                got->name = malloc((size_t)(eq - spec) + 1);
                if (got->name) snprintf(got->name, (size_t)(eq - spec) + 1, "%.*s", (int)(eq - spec), spec);
                else s = ATL_ERR_HOST_MEMORY;
            }
        }
        Input *grown = s ? NULL : realloc(list, (size_t)(count + (int)m + 1) * sizeof *list);
        if (s || !grown) {
            fprintf(stderr, "atoll run: %s\n", s == ATL_ERR_HOST_MEMORY || !s ? "out of memory" : msg);
            atl_arrays_free(got, m);
            for (int k = 0; k < count; k++) atl_array_free(&list[k].a);
            free(list);
            return -1;
        }
        list = grown;
        for (uint32_t k = 0; k < m; k++) list[count++] = (Input){ eq || !ends_with(spec, ".npz") ? file : spec, got[k], NULL };
        free(got);
    }
    *out = list;
    *n = count;
    return 0;
}

static void free_inputs(Input *in, int n)
{
    for (int i = 0; in && i < n; i++) { atl_array_free(&in[i].a); free(in[i].conv); }
    free(in);
}

/* The input tensor named name (NULL: the only one) in any variant of net. */
static const AtlTensorInfo *find_input(const AtlNetInfo *net, const char *name)
{
    for (uint32_t k = 0; k < net->n_variants; k++)
        for (uint32_t j = 0; j < net->variants[k].n_inputs; j++)
            if (name ? !strcmp(net->variants[k].inputs[j].name, name) : net->variants[k].n_inputs == 1) return &net->variants[k].inputs[j];
    return NULL;
}

static int is_output_name(const AtlNetInfo *net, const char *name)
{
    for (uint32_t k = 0; k < net->n_variants; k++)
        for (uint32_t j = 0; j < net->variants[k].n_outputs; j++)
            if (!strcmp(net->variants[k].outputs[j].name, name)) return 1;
    return 0;
}

/* Buffers for the arrays: each matched to its input by name, converted to
 * the input's dtype where needed (with a note). Arrays of an .npz named
 * like an output (a reference file with inputs and expected outputs) are
 * skipped with a note. Returns how many buffers, or -1. */
static int make_buffers(const AtlNetInfo *net, Input *in, int n, AtlBuffer *buf)
{
    int used = 0;
    for (int i = 0; i < n; i++) {
        AtlArray *a = &in[i].a;
        if (a->name && is_output_name(net, a->name)) {
            fprintf(stderr, "atoll run: note: %s: array '%s' is an output of net '%s'; not used as an input\n", in[i].file,
                    a->name, net->name);
            continue;
        }
        const AtlTensorInfo *t = find_input(net, a->name);
        if (!t) {
            if (a->name) fprintf(stderr, "atoll run: %s: net '%s' has no input named '%s'\n", in[i].file, net->name, a->name);
            else fprintf(stderr, "atoll run: --input %s: the net has several inputs; name them (--input NAME=X.npy) or use an .npz\n",
                         in[i].file);
            return -1;
        }
        if (a->ndim > ATL_MAX_DIMS) {
            fprintf(stderr, "atoll run: %s: array '%s' has %d dimensions (at most %d)\n", in[i].file, t->name, a->ndim, ATL_MAX_DIMS);
            return -1;
        }
        void *data = a->data;
        size_t size = a->size;
        if (a->dtype != t->dtype) {
            size_t count = atl_dtype_size(a->dtype) ? a->size / atl_dtype_size(a->dtype) : 0;
            char msg[256];
            in[i].conv = malloc(count * atl_dtype_size(t->dtype) + 1);
            if (!in[i].conv) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
            AtlStatus s = atl_convert(a->data, a->dtype, in[i].conv, t->dtype, count, msg, sizeof msg);
            if (s && strstr(msg, "without changing values")) {
                fprintf(stderr, "atoll run: %s: input '%s' is %s but the model expects %s\n", in[i].file, t->name,
                        atl_dtype_name(a->dtype), atl_dtype_name(t->dtype));
                return -1;
            }
            if (s) { fprintf(stderr, "atoll run: %s: input '%s' %s\n", in[i].file, t->name, msg); return -1; }
            fprintf(stderr, "atoll run: note: input '%s' is %s in %s; converted to the model's %s\n", t->name,
                    atl_dtype_name(a->dtype), in[i].file, atl_dtype_name(t->dtype));
            data = in[i].conv;
            size = count * atl_dtype_size(t->dtype);
        }
        AtlBuffer *b = &buf[used++];
        b->name = t->name;
        b->data = data;
        b->size = size;
        b->ndim = a->ndim;
        for (int d = 0; d < a->ndim; d++) b->dims[d] = (uint32_t)a->dims[d];
    }
    return used;
}

/* --timing-only without inputs: zero buffers of the net's first variant. */
static int zero_buffers(const AtlVariantInfo *st, AtlBuffer *buf, void **owned)
{
    for (uint32_t j = 0; j < st->n_inputs && j < MAXIN; j++) {
        owned[j] = calloc(1, (size_t)st->inputs[j].bytes + 1);
        if (!owned[j]) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
        atl_buffer_init(&buf[j], &st->inputs[j], owned[j]);
    }
    return (int)(st->n_inputs < MAXIN ? st->n_inputs : MAXIN);
}

/* ---- outputs ---- */

static int write_outputs(AtlModel *m, AtlDevice *dev, const AtlVariantInfo *st, const char *path)
{
    AtlArray *out = calloc(st->n_outputs + 1, sizeof *out);
    if (!out) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
    int rc = 0;
    char msg[1024];
    uint32_t i = 0;
    for (; i < st->n_outputs && !rc; i++) {
        const AtlTensorInfo *t = &st->outputs[i];
        /* .npy has no bfloat16: widened to float32 (exact) */
        int dt = t->dtype == ATL_BF16 ? ATL_FP32 : t->dtype;
        AtlArray *a = &out[i];
        a->dtype = dt;
        a->ndim = t->ndim;
        uint64_t n = 1;
        for (int d = 0; d < t->ndim; d++) { a->dims[d] = t->dims[d]; n *= t->dims[d]; }
        a->size = (size_t)n * atl_dtype_size(dt);
        a->name = malloc(strlen(t->name) + 1);
        a->data = malloc(a->size > t->bytes ? a->size + 1 : (size_t)t->bytes + 1);
        if (!a->name || !a->data) { fprintf(stderr, "atoll run: out of memory\n"); rc = -1; break; }
        strcpy(a->name, t->name);
        if (atl_output(m, t->name, 0, a->data, (size_t)t->bytes)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); rc = -1; break; }
        if (dt != t->dtype) {
            atl_convert(a->data, t->dtype, a->data, dt, (size_t)n, msg, sizeof msg);
            fprintf(stderr, "atoll run: note: output '%s' is bfloat16, written as float32\n", t->name);
        }
    }
    if (!rc) {
        AtlStatus s;
        if (ends_with(path, ".npy")) {
            if (st->n_outputs != 1) {
                fprintf(stderr, "atoll run: %s: the variant has %u outputs; write an .npz\n", path, st->n_outputs);
                rc = -1;
            } else if ((s = atl_npy_save(path, &out[0], msg, sizeof msg))) {
                fprintf(stderr, "atoll run: %s\n", msg);
                rc = -1;
            }
        } else if ((s = atl_npz_save(path, out, st->n_outputs, msg, sizeof msg))) {
            fprintf(stderr, "atoll run: %s\n", msg);
            rc = -1;
        }
    }
    atl_arrays_free(out, st->n_outputs);
    return rc;
}

/* Every activation and output of the variant, read back from device memory. */
static int dump_tensors(AtlModel *m, AtlDevice *dev, const AtlVariantInfo *st, const char *path)
{
    AtlArray *arr = calloc(st->n_tensors + 1, sizeof *arr);
    if (!arr) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
    uint32_t n = 0;
    int rc = 0;
    char msg[1024];
    for (uint32_t i = 0; i < st->n_tensors && !rc; i++) {
        const AtlTensorInfo *t = &st->tensors[i];
        if (t->role != ATL_ROLE_ACTIVATION && t->role != ATL_ROLE_OUTPUT) continue;
        AtlArray *a = &arr[n++];
        uint64_t dense = 1;
        for (int d = 0; d < t->ndim; d++) dense *= t->dims[d];
        int typed = t->dtype != ATL_BF16 && dense * atl_dtype_size(t->dtype) == t->bytes;
        a->dtype = typed ? t->dtype : ATL_UINT8;
        a->ndim = typed ? t->ndim : 1;
        if (typed) for (int d = 0; d < t->ndim; d++) a->dims[d] = t->dims[d];
        else a->dims[0] = t->bytes;
        a->size = (size_t)t->bytes;
        a->name = malloc(strlen(t->name) + 1);
        a->data = malloc((size_t)t->bytes + 1);
        if (!a->name || !a->data) { fprintf(stderr, "atoll run: out of memory\n"); rc = -1; break; }
        strcpy(a->name, t->name);
        if (atl_read_tensor(m, t->name, a->data, (size_t)t->bytes)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); rc = -1; }
    }
    if (!rc && atl_npz_save(path, arr, n, msg, sizeof msg)) { fprintf(stderr, "atoll run: %s\n", msg); rc = -1; }
    atl_arrays_free(arr, n);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    const char *model_path = NULL, *chip_arg = NULL, *output = NULL, *trace = NULL, *stats = NULL, *net_name = NULL;
    const char *heap = NULL, *maxc = NULL, *maxw = NULL, *dump = NULL, *csv = NULL, *specs[MAXIN], *v;
    int profile = 0, bad = 0, timing_only = 0, nspecs = 0;
    CliProgressMode pmode = CLI_PROGRESS_AUTO;
    for (int i = 1; i < argc && !bad; i++) {
        if (cli_is_help(argv[i])) { fputs(usage_text, stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_arg = v;
        else if ((v = cli_opt(argc, argv, &i, "--input", &bad))) {
            if (nspecs == MAXIN) { fprintf(stderr, "atoll run: too many --input options\n"); return 2; }
            specs[nspecs++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--output", &bad))) output = v;
        else if ((v = cli_opt(argc, argv, &i, "--trace", &bad))) trace = v;
        else if ((v = cli_opt(argc, argv, &i, "--stats", &bad))) stats = v;
        else if ((v = cli_opt(argc, argv, &i, "--csv", &bad))) csv = v;
        else if ((v = cli_opt(argc, argv, &i, "--net", &bad))) net_name = v;
        else if ((v = cli_opt(argc, argv, &i, "--fw-heap", &bad))) heap = v;
        else if ((v = cli_opt(argc, argv, &i, "--max-cycles", &bad))) maxc = v;
        else if ((v = cli_opt(argc, argv, &i, "--max-work", &bad))) maxw = v;
        else if ((v = cli_opt(argc, argv, &i, "--dump-tensors", &bad))) dump = v;
        else if (bad) break;
        else if (!strcmp(argv[i], "--profile")) profile = 1;
        else if (!strcmp(argv[i], "--timing-only")) timing_only = 1;
        else if (!strcmp(argv[i], "--progress")) pmode = CLI_PROGRESS_ON;
        else if (argv[i][0] == '-') return cli_bad_option("run", argv[i], usage_text);
        else if (!model_path) model_path = argv[i];
        else { fprintf(stderr, "atoll run: more than one model given ('%s')\n", argv[i]); bad = 1; }
    }
    if (!bad && (!model_path || (!nspecs && !timing_only))) {
        fprintf(stderr, "atoll run: %s is required\n", !model_path ? "a model" : "--input");
        bad = 1;
    }
    if (!bad && timing_only && (output || dump)) {
        fprintf(stderr, "atoll run: --timing-only computes no values: %s needs a full run\n", output ? "--output" : "--dump-tensors");
        bad = 1;
    }
    AtlOpenOptions opt = { 0 };
    uint64_t heap_bytes = 0;
    if (!bad && heap && cli_parse_u64("run", "--fw-heap", heap, 4096, (uint64_t)1 << 32, &heap_bytes)) bad = 1;
    opt.fw_heap_bytes = (size_t)heap_bytes;
    if (!bad && maxc && cli_parse_u64("run", "--max-cycles", maxc, 1, CLI_MAX_CYCLES, &opt.max_cycles)) bad = 1;
    if (!bad && maxw && cli_parse_u64("run", "--max-work", maxw, 1, UINT64_MAX >> 1, &opt.max_work)) bad = 1;
    if (bad) { fputs(usage_text, stderr); return 2; }
    opt.trace = trace != NULL;
    opt.timing_only = timing_only;
    AtlChip chip;
    char chip_path[4096];
    if (cli_load_chip("run", chip_arg, model_path, &chip, chip_path, sizeof chip_path)) return 1;
    CliPath ins[MAXIN + 2] = {{"model", model_path}, {"--chip", chip_path}};
    for (int i = 0; i < nspecs; i++) {
        const char *eq = strchr(specs[i], '=');
        ins[2 + i] = (CliPath){"--input", eq ? eq + 1 : specs[i]};
    }
    CliPath outs[] = {{"--output", output}, {"--stats", stats}, {"--trace", trace}, {"--dump-tensors", dump}, {"--csv", csv}};
    if (cli_check_outputs("run", ins, 2 + nspecs, outs, 5)) return 2;

    CliProgress pr;
    cli_progress_init(&pr, "run", pmode);
    Input *in = NULL;
    int nin = 0;
    int rc = 1;
    AtlDevice *dev = NULL;
    AtlModel *m = NULL;
    AtlBuffer *buf = NULL;
    void *zeros[MAXIN] = { 0 };
    cli_progress(&pr, "loading %s", model_path);
    AtlStatus s = atl_open_chip(&dev, &chip, &opt);
    if (s == ATL_OK) s = atl_load_file(dev, model_path, &m);
    if (s != ATL_OK) {
        cli_progress_end(&pr);
        fprintf(stderr, "atoll run: %s (%s)\n", dev ? atl_last_error(dev) : "out of memory", atl_status_name(s));
        goto out;
    }
    const AtlNetInfo *nets;
    uint32_t nn, ni = 0;
    atl_nets(m, &nets, &nn);
    if (net_name) while (ni < nn && strcmp(nets[ni].name, net_name)) ni++;
    if (ni >= nn) {
        cli_progress_end(&pr);
        fprintf(stderr, "atoll run: %s has no net%s%s%s\n", model_path, net_name ? " named '" : "s", net_name ? net_name : "", net_name ? "'" : "");
        goto out;
    }
    /* the inputs, read once the net says what they must be */
    cli_progress(&pr, "reading the inputs");
    if (read_inputs(specs, nspecs, &nets[ni], &in, &nin)) { cli_progress_end(&pr); goto out; }
    buf = calloc((size_t)nin + MAXIN + 1, sizeof *buf);
    if (!buf) { cli_progress_end(&pr); fprintf(stderr, "atoll run: out of memory\n"); goto out; }
    int nbuf = nin ? make_buffers(&nets[ni], in, nin, buf) : zero_buffers(&nets[ni].variants[0], buf, zeros);
    if (nbuf < 0) { cli_progress_end(&pr); goto out; }
    uint32_t variant;
    cli_progress(&pr, "running on the simulated %s%s", chip.name, timing_only ? " (timing only)" : "");
    s = atl_run(m, nets[ni].name, buf, (uint32_t)nbuf, &variant);
    cli_progress_end(&pr);
    if (s != ATL_OK) {
        fprintf(stderr, "atoll run: %s (%s)\n", atl_last_error(dev), atl_status_name(s));
        goto out;
    }
    const AtlVariantInfo *st = &nets[ni].variants[variant];
    AtlProfile p;
    atl_profile(m, &p);
    printf("ran net '%s' variant %u (batch %u) in %llu cycles on %s%s\n", nets[ni].name, variant, st->batch,
           (unsigned long long)p.cycles, chip.name, timing_only ? " (timing only)" : "");
    for (uint32_t i = 0; i < st->n_outputs; i++) {
        char sh[128];
        shape_text(sh, sizeof sh, st->outputs[i].ndim, st->outputs[i].dims);
        printf("  output %s %s%s\n", st->outputs[i].name, short_dtype[st->outputs[i].dtype], sh);
    }
    if (profile) print_profile(&p, st);
    if (output && write_outputs(m, dev, st, output)) goto out;
    if (dump && dump_tensors(m, dev, st, dump)) goto out;
    char *json = NULL;
    if (stats) {
        if (atl_stats_json(dev, &json)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); goto out; }
        int w = write_text(stats, json);
        free(json);
        if (w) goto out;
    }
    if (csv) {
        if (atl_layers_csv(dev, &json)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); goto out; }
        int w = write_text(csv, json);
        free(json);
        if (w) goto out;
    }
    if (trace) {
        if (atl_trace_json(dev, &json)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); goto out; }
        int w = write_text(trace, json);
        free(json);
        if (w) goto out;
    }
    rc = 0;
out:
    atl_unload(m);
    atl_close(dev);
    free(buf);
    for (int i = 0; i < MAXIN; i++) free(zeros[i]);
    free_inputs(in, nin);
    return rc;
}

/* host_example.c - the Atoll host API in one page: open a simulated chip,
 * load a compiled model, list what it contains, run it on zero-filled
 * inputs (the shapes of each net's first variant) or on an .npy array
 * (converted to the input's element type), print the first outputs and
 * the profile. Uses only include/atoll.h.
 *
 *   cc -Iinclude examples/host_example.c build/libatoll.a -lz -lm -o host_example
 *   cc -Iinclude examples/host_example.c -Lbuild -latoll -o host_example   (shared)
 *   ./host_example configs/tiny.ini model.abm [X.npy]
 */
#include <stdio.h>
#include <stdlib.h>
#include "atoll.h"

static const char *const dtype_names[] = { "int8", "uint8", "int16", "int32", "fp16", "bf16", "fp32" };

static void print_tensor(const char *kind, const AtlTensorInfo *t)
{
    printf("    %s %s %s[", kind, t->name, dtype_names[t->dtype]);
    for (int i = 0; i < t->ndim; i++) printf(i ? ",%u" : "%u", t->dims[i]);
    printf("] scale %g zero point %d\n", t->scale, t->zero_point);
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s CHIP.ini MODEL.abm [X.npy]\n", argv[0]);
        return 2;
    }
    /* an input array from a file, in whatever element type it was saved */
    AtlArray x = {0};
    char msg[512];
    if (argc == 4 && atl_npy_load(argv[3], &x, msg, sizeof msg) != ATL_OK) {
        fprintf(stderr, "host_example: %s\n", msg);
        return 1;
    }
    AtlDevice *dev = NULL;
    AtlModel *model = NULL;
    AtlStatus s = atl_open(&dev, argv[1], NULL);
    if (s == ATL_OK) s = atl_load_file(dev, argv[2], &model);
    if (s != ATL_OK) {
        fprintf(stderr, "host_example: %s: %s\n", atl_status_name(s), atl_last_error(dev));
        atl_close(dev);
        return 1;
    }
    const AtlNetInfo *nets;
    uint32_t n_nets;
    atl_nets(model, &nets, &n_nets);
    int failed = 0;
    for (uint32_t n = 0; n < n_nets; n++) {
        printf("net %s: %u variant(s)\n", nets[n].name, nets[n].n_variants);
        for (uint32_t k = 0; k < nets[n].n_variants; k++) {
            const AtlVariantInfo *st = &nets[n].variants[k];
            printf("  variant %u: batch %u on %u core(s)\n", k, st->batch, st->cores);
            for (uint32_t i = 0; i < st->n_inputs; i++) print_tensor("input ", &st->inputs[i]);
            for (uint32_t i = 0; i < st->n_outputs; i++) print_tensor("output", &st->outputs[i]);
        }
        /* run the first variant on zeros, or on the array (its first input) */
        const AtlVariantInfo *st = &nets[n].variants[0];
        AtlBuffer *in = calloc(st->n_inputs + 1, sizeof *in);
        for (uint32_t i = 0; in && i < st->n_inputs; i++) {
            const AtlTensorInfo *t = &st->inputs[i];
            atl_buffer_init(&in[i], t, calloc(1, t->bytes ? t->bytes : 1));
            if (i == 0 && x.data && in[i].data) {
                size_t count = x.size / atl_dtype_size(x.dtype);
                if (count * atl_dtype_size(t->dtype) != t->bytes) {
                    fprintf(stderr, "host_example: %s has %zu elements, input %s needs %llu bytes\n", argv[3], count, t->name,
                            (unsigned long long)t->bytes);
                    failed = 1;
                } else if (atl_convert(x.data, x.dtype, in[i].data, t->dtype, count, msg, sizeof msg) != ATL_OK) {
                    fprintf(stderr, "host_example: %s: %s\n", argv[3], msg);
                    failed = 1;
                }
            }
        }
        if (failed) { for (uint32_t i = 0; in && i < st->n_inputs; i++) free(in[i].data); free(in); break; }
        s = in ? atl_run(model, nets[n].name, in, st->n_inputs, NULL) : ATL_ERR_HOST_MEMORY;
        if (s != ATL_OK) {
            printf("  run: %s: %s\n", atl_status_name(s), atl_last_error(dev));
            failed = 1;
        } else {
            for (uint32_t o = 0; o < st->n_outputs; o++) {
                unsigned char *out = malloc(st->outputs[o].bytes ? st->outputs[o].bytes : 1);
                if (out && atl_output(model, st->outputs[o].name, 0, out, st->outputs[o].bytes) == ATL_OK) {
                    printf("  %s:", st->outputs[o].name);
                    for (uint64_t b = 0; b < st->outputs[o].bytes && b < 8; b++) printf(" %02x", out[b]);
                    printf("\n");
                }
                free(out);
            }
            AtlProfile p;
            atl_profile(model, &p);
            printf("  %llu cycles (%.3g s), firmware %llu cycles, %u layer(s); utilisation dma %.1f%% mat %.1f%% vec %.1f%%\n",
                   (unsigned long long)p.cycles, p.seconds, (unsigned long long)p.fw_cycles, p.n_layers,
                   100 * p.utilisation[0], 100 * p.utilisation[1], 100 * p.utilisation[2]);
        }
        for (uint32_t i = 0; in && i < st->n_inputs; i++) free(in[i].data);
        free(in);
    }
    atl_unload(model);
    atl_close(dev);
    atl_array_free(&x);
    return failed;
}

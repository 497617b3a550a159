/* bench_abm.c - write and load an .abm model with 100 MB of weights.
 *
 * The weights look like a real quantised network: 76 MiB of int8 values
 * drawn from a Gaussian (sigma 20, as after per-channel quantisation), in
 * layers of 0.5-4 MiB; 16 MiB of fp32 weights (Gaussian, sigma 0.05) for
 * layers kept in float; fp32 biases; and one 4 MiB int8 layer added twice,
 * which dedup must store once. For zlib levels 0 (store), 1 and 6 it
 * reports write time (add weights + serialise + atomic write), load time
 * (read + validate + inflate every blob into the DRAM weight image), load
 * throughput in raw weight MB per second, the time of validation alone
 * (abm_open + abm_decode on the bytes in memory: what the firmware pays
 * before touching weights), file size, and the ratio of the raw weight
 * bytes handed to the writer to the file size (compression and dedup).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "isa/abm.h"

#define MIB (1024u * 1024u)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) { return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform()); }

typedef struct Layer { uint8_t *data; size_t bytes; uint32_t dtype; } Layer;

static int build(Layer *layers, int n, int level, const char *path, double *secs, uint64_t *raw_in, AtlErr *e)
{
    double t0 = now();
    AbmWriter *w = abm_writer_new(0xA1ull);
    if (!w) return atl_fail(e, "out of memory");
    abm_writer_set_level(w, level);
    uint32_t net, st;
    int rc = -1;
    if (abm_add_net(w, "bignet", &net, e) || abm_add_variant(w, net, 1, 16, &st, e)) goto done;
    *raw_in = 0;
    for (int i = 0; i < n; i++) {
        uint64_t off;
        if (abm_add_weight(w, layers[i].data, layers[i].bytes, &off, e)) goto done;
        *raw_in += layers[i].bytes;
        char name[32];
        snprintf(name, sizeof name, "layer%d.weight", i);
        uint32_t es = abm_dtype_bytes(layers[i].dtype);
        AbmTensorDesc t = { .name = name, .dtype = layers[i].dtype, .role = ABM_ROLE_WEIGHT, .region = ABM_REGION_WEIGHTS,
                            .layout = ABM_LAYOUT_ROW_MAJOR, .ndim = 2, .dims = { 256, (uint32_t)(layers[i].bytes / es / 256) },
                            .offset = off };
        if (abm_add_tensor(w, st, &t, NULL, e)) goto done;
    }
    uint8_t insn[ABM_INSN_BYTES * 1024];
    for (size_t k = 0; k < sizeof insn; k++) insn[k] = (uint8_t)(k % 64 < 16 ? k * 31 : 0);
    for (uint32_t c = 0; c < 16; c++)
        for (uint32_t g = 0; g < ABM_ENGINES; g++)
            if (abm_set_stream(w, st, c, g, insn, sizeof insn, e)) goto done;
    if (abm_set_mem_plan(w, st, 64 * MIB, MIB, e) || abm_set_metadata(w, "bench_abm", "-O2", NULL, e)) goto done;
    if (abm_write_file(w, path, e)) goto done;
    rc = 0;
done:
    abm_writer_free(w);
    *secs = now() - t0;
    return rc;
}

int main(void)
{
    enum { MAXL = 128 };
    Layer layers[MAXL];
    int n = 0;
    size_t total = 0;
    /* int8 Gaussian layers: 76 MiB in sizes cycling 0.5, 1, 2, 4 MiB */
    size_t sizes[4] = { MIB / 2, MIB, 2 * MIB, 4 * MIB };
    for (size_t used = 0, k = 0; used < 76 * (size_t)MIB; k++) {
        size_t b = sizes[k % 4];
        if (b > 76 * (size_t)MIB - used) b = 76 * (size_t)MIB - used;
        int8_t *d = malloc(b);
        if (!d) return 1;
        for (size_t i = 0; i < b; i++) {
            double x = gauss() * 20.0;
            d[i] = (int8_t)(x > 127 ? 127 : x < -128 ? -128 : lrint(x));
        }
        layers[n++] = (Layer){ (uint8_t *)d, b, ABM_DTYPE_INT8 };
        used += b;
        total += b;
    }
    /* fp32 layers: 16 MiB in 4 MiB layers, plus 8 bias vectors */
    for (int k = 0; k < 4; k++) {
        float *d = malloc(4 * MIB);
        if (!d) return 1;
        for (size_t i = 0; i < MIB; i++) d[i] = (float)(gauss() * 0.05);
        layers[n++] = (Layer){ (uint8_t *)d, 4 * MIB, ABM_DTYPE_FP32 };
        total += 4 * MIB;
    }
    for (int k = 0; k < 8; k++) {
        float *d = malloc(4096);
        if (!d) return 1;
        for (size_t i = 0; i < 1024; i++) d[i] = (float)(gauss() * 0.5);
        layers[n++] = (Layer){ (uint8_t *)d, 4096, ABM_DTYPE_FP32 };
        total += 4096;
    }
    /* a shared layer: the first 4 MiB int8 layer again (different buffer, same bytes) */
    for (int k = 0; k < n; k++)
        if (layers[k].bytes == 4 * MIB && layers[k].dtype == ABM_DTYPE_INT8) {
            uint8_t *d = malloc(4 * MIB);
            if (!d) return 1;
            memcpy(d, layers[k].data, 4 * MIB);
            layers[n++] = (Layer){ d, 4 * MIB, ABM_DTYPE_INT8 };
            total += 4 * MIB;
            break;
        }
    char path[] = "/tmp/atoll_bench_abmXXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    printf("bench_abm: %d weight layers, %.1f MB raw (int8 Gaussian, fp32, one duplicated 4 MiB layer)\n", n, (double)total / 1e6);
    printf("%-6s %10s %10s %12s %12s %12s %10s %8s\n", "zlib", "write s", "load s", "load MB/s", "validate s", "file MB", "ratio", "blobs");
    int status = 0;
    int levels[3] = { 0, 1, 6 };
    for (int li = 0; li < 3; li++) {
        AtlErr e;
        double wsecs = 0;
        uint64_t raw = 0;
        if (build(layers, n, levels[li], path, &wsecs, &raw, &e)) { fprintf(stderr, "bench_abm: %s\n", e.msg); status = 1; break; }
        double t0 = now();
        AbmModel m;
        if (abm_load_file(&m, path, 0xA1ull, 0, &e)) { fprintf(stderr, "bench_abm: %s\n", e.msg); status = 1; break; }
        double lsecs = now() - t0;
        /* the loaded image must hold every layer where its tensor points */
        AbmVariant st = abm_variant(&m.view, 0);
        for (uint32_t t = 0; t < st.tensor_count; t++) {
            AbmTensor x = abm_tensor(&m.view, st.tensor_first + t);
            if (memcmp(m.weights + x.offset, layers[t].data, layers[t].bytes) != 0) {
                fprintf(stderr, "bench_abm: layer %u differs after loading\n", t);
                status = 1;
            }
        }
        uint64_t fsize = m.view.size;
        double t1 = now();
        AbmView *v = malloc(sizeof *v);
        uint8_t *sc = NULL;
        if (!v || abm_open(v, m.file, fsize, 0xA1ull, 0, &e) || !(sc = malloc(v->scratch_needed)) ||
            abm_decode(v, sc, v->scratch_needed, &e)) {
            fprintf(stderr, "bench_abm: validate: %s\n", e.msg);
            status = 1;
        }
        double vsecs = now() - t1;
        free(sc);
        free(v);
        printf("%-6d %10.3f %10.3f %12.1f %12.3f %12.2f %10.3f %8u\n", levels[li], wsecs, lsecs,
               (double)m.weight_bytes / 1e6 / lsecs, vsecs, (double)fsize / 1e6, (double)raw / (double)fsize, m.view.n_blobs);
        abm_model_free(&m);
    }
    remove(path);
    for (int k = 0; k < n; k++) free(layers[k].data);
    return status;
}

/* bench_fw.c - what loading a model costs on the device: for models of 4,
 * 16 and 64 MiB of int8 weights (Gaussian, sigma 20, in 1 MiB blobs) stored
 * raw (zlib level 0) and compressed (level 1), the host wall time of the
 * whole atl-style load (ALLOC, copy into device DRAM, LOAD: validation,
 * inflate/copy of every blob, stream relocation), and the simulated
 * control-processor cycles the firmware charged for it (FW_CYCLES, from
 * the cost table in firmware/fw.h), with the equivalent time at the chip
 * clock. Chip: configs/a1.ini.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "isa/abm.h"
#include "isa/config.h"
#include "isa/regs.h"
#include "sim/device.h"

#define MIB (1024u * 1024u)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint32_t rng(uint32_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 17; *s ^= *s << 5;
    return *s;
}

static uint8_t *make_model(uint64_t fp, unsigned mib, int level, size_t *len)
{
    AtlErr e;
    AbmWriter *w = abm_writer_new(fp);
    uint32_t net, st, seed = 12345 + mib;
    uint8_t *blob = malloc(MIB), *out = NULL;
    int bad = !w || !blob || abm_add_net(w, "big", &net, &e) || abm_add_variant(w, net, 1, 1, &st, &e);
    if (w) abm_writer_set_level(w, level);
    for (unsigned b = 0; b < mib && !bad; b++) {
        for (size_t i = 0; i < MIB; i++) {   /* Box-Muller-free Gaussian: sum of 4 uniforms */
            int s = 0;
            for (int k = 0; k < 4; k++) s += (int)(rng(&seed) % 35) - 17;
            blob[i] = (uint8_t)(int8_t)(s > 127 ? 127 : s < -128 ? -128 : s);
        }
        uint64_t off;
        bad = abm_add_weight(w, blob, MIB, &off, &e);
    }
    AbmTensorDesc x = { .name = "x", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO, .ndim = 1, .dims = { 64 } };
    if (!bad) bad = abm_add_tensor(w, st, &x, NULL, &e) || abm_set_mem_plan(w, st, 0, 64, &e);
    if (bad || abm_serialize(w, &out, len, &e)) { fprintf(stderr, "bench_fw: %s\n", e.msg); out = NULL; }
    abm_writer_free(w);
    free(blob);
    return out;
}

static uint32_t post(AtlSimDevice *d, uint32_t cmd, const uint32_t *a, int n)
{
    device_reg_write(d, ATL_REG_MB_CMD, cmd);
    for (int i = 0; i < ATL_MB_ARGS; i++) device_reg_write(d, ATL_REG_MB_ARG + 4 * (uint32_t)i, i < n ? a[i] : 0);
    device_reg_write(d, ATL_REG_MB_DOORBELL, 1);
    return device_reg_read(d, ATL_REG_MB_ERROR);
}

static uint64_t fw_cycles(AtlSimDevice *d)
{
    return device_reg_read(d, ATL_REG_FW_CYCLES_LO) | (uint64_t)device_reg_read(d, ATL_REG_FW_CYCLES_HI) << 32;
}

int main(void)
{
    AtlChip chip;
    AtlErr e;
    if (cfg_load("configs/a1.ini", &chip, &e)) { fprintf(stderr, "bench_fw: %s\n", e.msg); return 1; }
    uint64_t fp = cfg_fingerprint(&chip);
    printf("bench_fw: model load through the firmware on %s (%.0f MHz)\n", chip.name, chip.freq_mhz);
    printf("%8s %6s %10s %10s %12s %14s %12s\n", "weights", "zlib", "file MiB", "host ms", "host MB/s", "fw cycles", "fw ms@clk");
    static const unsigned sizes[] = { 4, 16, 64 };
    for (int si = 0; si < 3; si++)
        for (int level = 0; level <= 1; level++) {
            size_t len;
            uint8_t *img = make_model(fp, sizes[si], level, &len);
            if (!img) return 1;
            AtlSimDevice *d = device_create(&chip, NULL, &e);
            if (!d) { fprintf(stderr, "bench_fw: %s\n", e.msg); return 1; }
            double t0 = now();
            uint64_t c0 = fw_cycles(d);
            uint32_t a[3] = { (uint32_t)len, 0, 0 };
            int rc = post(d, ATL_MB_ALLOC, a, 3);
            uint64_t at = device_reg_read(d, ATL_REG_MB_RESULT);
            if (!rc) memcpy(device_dram(d, at, len), img, len);
            uint32_t l[4] = { (uint32_t)at, 0, (uint32_t)len, 0 };
            if (!rc) rc = post(d, ATL_MB_LOAD, l, 4);
            double t = now() - t0;
            uint64_t c = fw_cycles(d) - c0;
            if (rc) { fprintf(stderr, "bench_fw: load failed with %d\n", rc); return 1; }
            printf("%5u MiB %6d %10.1f %10.1f %12.0f %14llu %12.3f\n", sizes[si], level, (double)len / MIB, t * 1e3,
                   (double)sizes[si] * MIB / 1e6 / t, (unsigned long long)c, (double)c / (chip.freq_mhz * 1e3));
            device_free(d);
            free(img);
        }
    return 0;
}

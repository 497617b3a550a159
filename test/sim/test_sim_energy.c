/* test_sim_energy.c - the energy report checked against values computed by
 * hand: small programs whose MACs per dtype, vector elements and bytes per
 * memory level are counted here from the instructions themselves (not read
 * back from the simulator's counters), multiplied by the chip's pJ table,
 * plus static power x cores x simulated time. Every component, their sum,
 * and the figures printed in the text report and the stats JSON must equal
 * those hand-computed values. The pJ figures of the test chip are all
 * different, so a component priced with another's figure shows up. */
#include <stdlib.h>
#include "test/test.h"
#include "test/sim/simtest.h"

/* the energy components in the order of AtlSimEnergy and of the report */
enum { E_MAC, E_VEC, E_LMEM, E_SRAM, E_NOC, E_DRAM, E_STATIC, E_TOTAL, E_N };
static const char *const json_keys[E_N] = {"mac", "vector", "lmem", "sram", "noc", "dram", "static", "total"};

static void energy_of(const AtlSimEnergy *en, double v[E_N])
{
    v[E_MAC] = en->mac; v[E_VEC] = en->vec; v[E_LMEM] = en->lmem; v[E_SRAM] = en->sram;
    v[E_NOC] = en->noc; v[E_DRAM] = en->dram; v[E_STATIC] = en->stat; v[E_TOTAL] = en->total;
}

/* What a program does, counted by hand. */
typedef struct Counts {
    double macs_i8, macs_f16, macs_bf16, macs_f32, vec_elems;
    double lmem_bytes, sram_bytes, noc_bytes, dram_bytes;   /* read + written */
} Counts;

/* The chip's pJ table applied to the counts; static from the run's cycles. */
static void hand_energy(const AtlChip *c, const Counts *k, int cores, uint64_t cycles, double v[E_N])
{
    v[E_MAC] = k->macs_i8 * c->e_mac_i8 + (k->macs_f16 + k->macs_bf16) * c->e_mac_f16 + k->macs_f32 * c->e_mac_f32;
    v[E_VEC] = k->vec_elems * c->e_vec_op;
    v[E_LMEM] = k->lmem_bytes * c->e_lmem_byte;
    v[E_SRAM] = k->sram_bytes * c->e_sram_byte;
    v[E_NOC] = k->noc_bytes * c->e_noc_byte;
    v[E_DRAM] = k->dram_bytes * c->e_dram_byte;
    /* mW x cores x seconds, in pJ */
    v[E_STATIC] = c->e_static_mw_core * 1e-3 * cores * ((double)cycles / (c->freq_mhz * 1e6)) * 1e12;
    v[E_TOTAL] = 0;
    for (int i = 0; i < E_TOTAL; i++) v[E_TOTAL] += v[i];
}

/* The chip of simtest.h with a non-zero static power and a pJ figure per
 * component that no other component shares. */
static void energy_chip(AtlChip *c, int clusters, int cpc)
{
    tchip(c, clusters, cpc);
    c->e_mac_i8 = 0.2; c->e_mac_f16 = 1.1; c->e_mac_f32 = 3.7; c->e_vec_op = 0.5;
    c->e_lmem_byte = 1.25; c->e_sram_byte = 2.5; c->e_noc_byte = 3; c->e_dram_byte = 20; c->e_static_mw_core = 50;
}

/* Runs p and checks the energy (struct, text report, JSON) against k. */
static void check_energy(const AtlChip *c, AtlProgram *p, const Counts *k, const char *what)
{
    AtlSim *s;
    AtlErr e = {{0}};
    int rc = trun(c, p, SIM_MODE_FULL, &s, &e);
    CHECKF(rc == 0, "%s: %s", what, e.msg);
    if (rc) { sim_free(s); return; }
    const AtlSimStats *st = sim_stats(s);
    double want[E_N], got[E_N];
    hand_energy(c, k, c->clusters * c->cores_per_cluster, st->cycles, want);
    energy_of(&st->energy, got);
    CHECKF(st->cycles > 0 && want[E_STATIC] > 0, "%s: %llu cycles", what, (unsigned long long)st->cycles);
    for (int i = 0; i < E_N; i++)
        CHECKF(fabs(got[i] - want[i]) <= 1e-9 * (1 + fabs(want[i])), "%s: energy %s %.6f pJ, by hand %.6f pJ", what,
               json_keys[i], got[i], want[i]);
    /* the components add up to the total */
    double sum = 0;
    for (int i = 0; i < E_TOTAL; i++) sum += got[i];
    CHECKF(fabs(sum - got[E_TOTAL]) <= 1e-9 * sum, "%s: components sum to %.6f pJ, total %.6f pJ", what, sum, got[E_TOTAL]);
    /* the stats JSON carries the same values ("%.6g": 6 significant digits) */
    char *json = sim_stats_json(s);
    const char *obj = json ? strstr(json, "\"energy_pj\":") : NULL;
    CHECKF(obj != NULL, "%s: no energy_pj in the stats JSON", what);
    for (int i = 0; obj && i < E_N; i++) {
        char key[32];
        snprintf(key, sizeof key, "\"%s\":", json_keys[i]);
        const char *at = strstr(obj, key);
        CHECKF(at != NULL, "%s: energy_pj has no %s", what, key);
        if (at) {
            double v = strtod(at + strlen(key), NULL);
            CHECKF(fabs(v - want[i]) <= 5e-6 * fabs(want[i]), "%s: JSON energy %s = %g pJ, by hand %.6f", what, json_keys[i], v, want[i]);
        }
    }
    free(json);
    /* the text report in uJ, three decimals: total, MAC, vector, LMEM, SRAM, NoC, DRAM, static */
    char *txt = sim_report_text(s);
    const char *line = txt ? strstr(txt, "energy  ") : NULL;
    CHECKF(line != NULL, "%s: no energy line in the report", what);
    if (line) {
        double r[E_N];
        int n = sscanf(line, "energy  %lf uJ: MAC %lf, vector %lf, LMEM %lf, SRAM %lf, NoC %lf, DRAM %lf, static %lf uJ",
                       &r[E_TOTAL], &r[E_MAC], &r[E_VEC], &r[E_LMEM], &r[E_SRAM], &r[E_NOC], &r[E_DRAM], &r[E_STATIC]);
        CHECKF(n == 8, "%s: energy line not parsed (%d fields): %.120s", what, n, line);
        for (int i = 0; n == 8 && i < E_N; i++)
            CHECKF(fabs(r[i] - want[i] * 1e-6) <= 0.0005 + 1e-12, "%s: report %s %.3f uJ, by hand %.6f uJ", what, json_keys[i], r[i],
                   want[i] * 1e-6);
    }
    free(txt);
    sim_free(s);
}

/* One core: load A|B from DRAM, an int8 8x8x8 mm into an i32 accumulator,
 * relu of the accumulator, store it to DRAM. */
TEST(int8_mm_relu_store)
{
    AtlChip c;
    energy_chip(&c, 1, 1);
    AtlProgram p;
    tp_init(&p, 1);
    int8_t ab[128];
    for (int i = 0; i < 128; i++) ab[i] = (int8_t)(i * 5 - 60);
    tp_seg(&p, 0, ab, sizeof ab);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0, 128), 0));
    tp_add(&p, 0, ISA_ENGINE_MAT, sync_ws(I_mm(ISA_I8, 256, 0, 64, 8, 8, 8), 0, 1));
    tp_add(&p, 0, ISA_ENGINE_VEC, sync_ws(I_vec(ISA_OP_V_RELU, ISA_I32, 512, 256, 0, 64), 1, 2));
    tp_add(&p, 0, ISA_ENGINE_DMA, I_wait(I_store(4096, 512, 256), 2));
    tp_end_all(&p);
    Counts k = {0};
    k.macs_i8 = 8 * 8 * 8;
    k.vec_elems = 64;
    /* LMEM: load writes 128; mm reads A and B (64 + 64), writes C as i32
     * (256); relu reads and writes 256; the store reads 256 */
    k.lmem_bytes = 128 + (128 + 256) + (256 + 256) + 256;
    k.dram_bytes = 128 + 256;        /* load reads, store writes */
    k.noc_bytes = 128 + 256;         /* both cross the NoC to DRAM */
    check_energy(&c, &p, &k, "int8 mm + relu");
    tp_free(&p);
}

/* Two cores of one cluster: DRAM -> SRAM, SRAM -> LMEM multicast to both
 * cores, a fill (no source read), and fp32, fp16 and bf16 mm (each priced
 * at its own dtype's figure); static power counts both cores. */
TEST(sram_multicast_fill_float_mms)
{
    AtlChip c;
    energy_chip(&c, 1, 2);
    AtlProgram p;
    tp_init(&p, 2);
    uint8_t z[256] = {0};
    tp_seg(&p, 0, z, sizeof z);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_dma(ISA_I8, ISA_SPACE_SRAM, 0, 0, ISA_SPACE_DRAM, 0, 0, 1, 256), 0));
    AtlInsn mc = I_dma(ISA_I8, ISA_SPACE_LMEM, 0, 0, ISA_SPACE_SRAM, 0, 0, 1, 256);
    mc.mask = 0x3;
    tp_add(&p, 0, ISA_ENGINE_DMA, I_wait(mc, 0));
    AtlInsn f = I(ISA_OP_DMA_FILL);
    f.dtype = ISA_I16; f.dst_space = ISA_SPACE_LMEM; f.dst = 1024; f.mask = 0x2; f.ival = 0;
    f.shape[0] = f.shape[1] = f.shape[2] = 1; f.shape[3] = 32; f.dst_stride[3] = 2;
    tp_add(&p, 0, ISA_ENGINE_DMA, f);
    /* every core waits for both DMAs through a cluster barrier on its DMA
     * engine, then hands over to its matrix unit */
    for (int core = 0; core < 2; core++) {
        AtlInsn b = I(ISA_OP_BARRIER);
        b.scope = ISA_SCOPE_CLUSTER; b.bar_id = 1; b.bar_count = 2;
        tp_add(&p, core, ISA_ENGINE_DMA, I_sig(b, 1));
    }
    tp_add(&p, 1, ISA_ENGINE_MAT, I_wait(I_mm(ISA_F32, 4096, 0, 1024, 2, 4, 8), 1));
    tp_add(&p, 0, ISA_ENGINE_MAT, I_wait(I_mm(ISA_F16, 4096, 0, 2048, 4, 8, 8), 1));
    tp_add(&p, 0, ISA_ENGINE_MAT, I_mm(ISA_BF16, 8192, 0, 2048, 1, 8, 8));
    tp_end_all(&p);
    Counts k = {0};
    k.macs_f32 = 2 * 4 * 8;
    k.macs_f16 = 4 * 8 * 8;
    k.macs_bf16 = 1 * 8 * 8;
    k.dram_bytes = 256;              /* read once into SRAM */
    k.noc_bytes = 256;               /* only the DRAM transfer crosses the NoC */
    k.sram_bytes = 256 + 256;        /* written from DRAM, read by the multicast */
    /* LMEM writes: multicast 2 x 256, fill 64; mm outputs f32 2x8, 4x8,
     * 1x8 (x4 bytes); reads: A and B of each mm (f32 4 bytes, f16/bf16 2) */
    k.lmem_bytes = 2 * 256 + 64 + 4.0 * (16 + 32 + 8) + 4.0 * (8 + 32) + 2.0 * (32 + 64) + 2.0 * (8 + 64);
    check_energy(&c, &p, &k, "sram, multicast, fill, float mms");
    tp_free(&p);
}

int main(void)
{
    RUN(int8_mm_relu_store);
    RUN(sram_multicast_fill_float_mms);
    return test_summary("test_sim_energy");
}

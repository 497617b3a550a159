/* bk_cost.c - the cost model: estimated cycles of a group schedule.
 *
 * Reads: a BkGroup and the chip. Calls the isa/timing.h formulas the
 *   simulator uses for every instruction (tim_compute_cycles for mm/conv/
 *   vector ops, tim_dma_cycles for each copy), so estimate and simulation
 *   share their arithmetic.
 * Does: generates every tile as the emitter would (same slots, same weight
 *   skipping) and replays each core's time-step table:
 *     DMA queue   L0, L1, S0, L2, S1, ...   (in order, one at a time)
 *     compute     Ci starts when Li has landed and its engines are free;
 *                 inside Ci an engine change waits for the previous one;
 *     store Si    starts when Ci is done and the DMA queue is free.
 *   The layer's estimate is the slowest core, but at least the DRAM
 *   bandwidth bound (all cores' DMA bytes / chip DRAM bytes per cycle) and
 *   the per-cluster NoC bound, plus the barrier that ends the layer.
 * Guarantees: est_cycles, est_compute (max over cores of the busiest
 *   compute engine) and est_dma (max over cores of DMA busy cycles).
 * Why: the tile planner picks the tile shape with the lowest estimate, and
 *   `atoll compile --estimate` reports it per layer. */
#include <stdlib.h>
#include <string.h>
#include "compiler/bk_int.h"
#include "isa/timing.h"

static uint64_t dma_bytes(const AtlInsn *in)
{
    uint64_t n = (uint64_t)isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) n *= in->shape[d];
    return n;
}

uint64_t bk_insn_cycles(const AtlChip *chip, const AtlInsn *in)
{
    if (in->op == ISA_OP_DMA_COPY || in->op == ISA_OP_DMA_FILL)
        return tim_dma_cycles(chip, in->dst_space, in->op == ISA_OP_DMA_FILL ? in->dst_space : in->src_space,
                              dma_bytes(in));
    return tim_compute_cycles(chip, in);
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

int bk_cost_group(BkCtx *c, BkGroup *g, AtlErr *e)
{
    const AtlChip *ch = c->chip;
    BkCode code;
    memset(&code, 0, sizeof code);
    int *idx = malloc((size_t)(g->ntiles ? g->ntiles : 1) * sizeof *idx);
    uint64_t *cluster_bytes = calloc((size_t)ch->clusters, sizeof *cluster_bytes);
    if (!idx || !cluster_bytes) { free(idx); free(cluster_bytes); return atl_fail(e, "out of memory in the cost model"); }
    uint64_t worst = 0, wcomp = 0, wdma = 0, total_bytes = 0;
    int rc = -1;
    for (int core = 0; core < c->ncores; core++) {
        int n = 0;
        for (int t = 0; t < g->ntiles; t++) if (g->tile_core[t] == core) idx[n++] = t;
        uint64_t dma_t = 0, dma_busy = 0, eng_free[ISA_NUM_ENGINES] = {0}, busy[ISA_NUM_ENGINES] = {0};
        uint64_t l_end_prev = 0, l_end_next = 0;
        int wk[2] = {-1, -1};
        for (int i = -1; i < n; i++) {
            /* load of tile i+1 */
            if (i + 1 < n) {
                int s = (i + 1) % 2;
                bk_code_reset(&code);
                if (g->gen(c, g, idx[i + 1], (uint64_t)s * c->slot, &code, e)) goto done;
                int key = g->tile_wkey[idx[i + 1]];
                int skip = !g->direct && key >= 0 && wk[s] == key;
                wk[s] = key;
                const AtlInsn *list = g->direct ? code.st : code.ld;
                int cnt = g->direct ? code.nst : code.nld;
                for (int k = 0; k < cnt; k++) {
                    if (skip && !g->direct && code.ld_w[k]) continue;
                    uint64_t cyc = bk_insn_cycles(ch, &list[k]);
                    dma_t += cyc;
                    dma_busy += cyc;
                    total_bytes += dma_bytes(&list[k]);
                    cluster_bytes[core / ch->cores_per_cluster] += dma_bytes(&list[k]);
                }
                l_end_prev = l_end_next;
                l_end_next = dma_t;
            } else l_end_prev = l_end_next;
            if (i < 0 || g->direct) continue;
            /* compute of tile i (regenerate: the code buffer holds i+1) */
            bk_code_reset(&code);
            if (g->gen(c, g, idx[i], (uint64_t)(i % 2) * c->slot, &code, e)) goto done;
            uint64_t dep = l_end_prev, end = dep;
            int prev = -1;
            for (int k = 0; k < code.ncp; k++) {
                int eng = isa_ops[code.cp[k].op].engine;
                if (eng == ISA_ENGINE_ANY) eng = ISA_ENGINE_VEC;
                uint64_t start = eng_free[eng];
                if (k == 0 || eng != prev) start = max64(start, k == 0 ? dep : end);
                uint64_t cyc = tim_compute_cycles(ch, &code.cp[k]);
                end = start + cyc;
                eng_free[eng] = end;
                busy[eng] += cyc;
                prev = eng;
            }
            /* store of tile i */
            dma_t = max64(dma_t, end);
            for (int k = 0; k < code.nst; k++) {
                uint64_t cyc = bk_insn_cycles(ch, &code.st[k]);
                dma_t += cyc;
                dma_busy += cyc;
                total_bytes += dma_bytes(&code.st[k]);
                cluster_bytes[core / ch->cores_per_cluster] += dma_bytes(&code.st[k]);
            }
        }
        worst = max64(worst, dma_t);
        wcomp = max64(wcomp, max64(busy[ISA_ENGINE_MAT], busy[ISA_ENGINE_VEC]));
        wdma = max64(wdma, dma_busy);
    }
    uint64_t bound = tim_occupancy(total_bytes, tim_dram_bytes_per_cycle(ch));
    for (int k = 0; k < ch->clusters; k++)
        bound = max64(bound, tim_occupancy(cluster_bytes[k], (double)ch->noc_bytes_per_cycle));
    g->est_cycles = max64(worst, bound) + (uint64_t)ch->barrier_cycles;
    g->est_compute = wcomp;
    g->est_dma = wdma;
    rc = 0;
done:
    bk_code_free(&code);
    free(idx);
    free(cluster_bytes);
    return rc;
}

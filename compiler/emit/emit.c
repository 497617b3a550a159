/* emit.c - the pipeline emitter: a group schedule -> per-core streams.
 *
 * Reads: a BkGroup (tiles, their cores, the tile generator), the chip.
 * Does, for each core, with the core's tiles T0..Tn-1 in order and slot
 * b(i) = i % 2 at LMEM offset b(i) * slot_bytes:
 *   DMA stream:  L0, L1, S0, L2, S1, ..., L(n-1), S(n-2), S(n-1)
 *   compute:     C0, C1, ..., C(n-1) on the MAT/VEC streams
 * i.e. the 3-stage time-step table (load i+1 | compute i | store i-1).
 * Sync, all with the wait/signal fields of the instructions (ids in
 * bk_int.h):
 *   - the last load of Li signals LOADED[b]; the first compute of Ci waits
 *     on it;
 *   - inside Ci, whenever the engine changes (MAT -> VEC or back), the last
 *     instruction on the old engine signals TO_VEC[b]/TO_MAT[b] and the
 *     first on the new engine waits on it, so Ci's instructions run in
 *     order and its last instruction completes last;
 *   - the last compute of Ci signals COMPUTED[b]; the first store of Si
 *     waits on it;
 *   - Li+2 reuses slot b: it follows Si in the in-order DMA queue, and Si
 *     started only after Ci completed, so no semaphore is needed for that
 *     (write-after-read on the slot is ordered through COMPUTED).
 *   An instruction that would need two waits (or two signals) gets a `nop`
 *   on its engine carrying the extra one. Every signal is consumed exactly
 *   once, so all semaphores are 0 again at the end of each layer.
 * Weight keys: when tile i has the same weight key as the previous tile of
 *   the same slot on this core, its loads marked as weights are skipped
 *   (the slot still holds them).
 * Weight multicast (g->mcast): before the tiles, per cluster, the lowest
 *   core that runs tiles sends the layer's resident weights (g->prologue)
 *   with one masked DMA per piece into every core of the cluster that runs
 *   tiles; the last piece signals WEIGHTS on each of them, and each waits
 *   on it with a `nop` on its matrix stream before its first tile. The
 *   resident region lies below the slots, so loads into the slots never
 *   touch it, and the previous layer's barrier makes it free to overwrite.
 * Layers are separated by a chip-wide barrier that all three engines of
 *   every core join (count = 3 x cores): layer L+1 reads what any core wrote
 *   in layer L only after every engine finished layer L. DMA-only layers
 *   (direct) put their copies on the DMA streams between the barriers.
 * Every instruction gets layer = the group's layer id. */
#include <stdlib.h>
#include <string.h>
#include "compiler/target/target.h"

static int put(BkCtx *c, int core, int engine, AtlInsn in, int layer, AtlErr *e)
{
    in.layer = (uint16_t)layer;
    /* an lmem: source is the issuing core's own LMEM */
    if (in.op == ISA_OP_DMA_COPY && in.src_space == ISA_SPACE_LMEM)
        in.src_core = (uint8_t)(core % c->chip->cores_per_cluster);
    return prog_append(&c->prog, core, engine, &in, 0, e);
}

static AtlInsn nop(int wait, int signal)
{
    AtlInsn n;
    memset(&n, 0, sizeof n);
    n.op = ISA_OP_NOP;
    n.wait = (uint8_t)(wait >= 0 ? wait + 1 : 0);
    n.signal = (uint8_t)(signal >= 0 ? signal + 1 : 0);
    return n;
}

static int engine_of(const AtlInsn *in)
{
    int eng = isa_ops[in->op].engine;
    return eng == ISA_ENGINE_ANY ? ISA_ENGINE_VEC : eng;
}

/* Emits the compute of one tile on slot b. */
static int emit_compute(BkCtx *c, int core, const BkCode *k, int b, int layer, AtlErr *e)
{
    if (k->ncp == 0)
        return put(c, core, ISA_ENGINE_VEC, nop(BK_SEM_LOADED + b, BK_SEM_COMPUTED + b), layer, e);
    int prev = -1;
    for (int i = 0; i < k->ncp; i++) {
        AtlInsn in = k->cp[i];
        int eng = engine_of(&in);
        int w1 = -1, w2 = -1;
        if (i == 0) w1 = BK_SEM_LOADED + b;
        if (prev >= 0 && eng != prev) {
            int sem = (eng == ISA_ENGINE_MAT ? BK_SEM_TO_MAT : BK_SEM_TO_VEC) + b;
            /* the previous engine's last instruction hands over */
            if (put(c, core, prev, nop(-1, sem), layer, e)) return -1;
            if (w1 < 0) w1 = sem; else w2 = sem;
        }
        if (w2 >= 0 && put(c, core, eng, nop(w2, -1), layer, e)) return -1;
        in.wait = (uint8_t)(w1 >= 0 ? w1 + 1 : 0);
        in.signal = 0;
        int last = i == k->ncp - 1;
        if (last) in.signal = (uint8_t)(BK_SEM_COMPUTED + b + 1);
        if (put(c, core, eng, in, layer, e)) return -1;
        prev = eng;
    }
    return 0;
}

static int emit_loads(BkCtx *c, int core, const BkCode *k, int b, int skipw, int layer, AtlErr *e)
{
    int lastk = -1;
    for (int i = 0; i < k->nld; i++)
        if (!(skipw && k->ld_w[i])) lastk = i;
    if (lastk < 0) return put(c, core, ISA_ENGINE_DMA, nop(-1, BK_SEM_LOADED + b), layer, e);
    for (int i = 0; i < k->nld; i++) {
        if (skipw && k->ld_w[i]) continue;
        AtlInsn in = k->ld[i];
        in.wait = 0;
        in.signal = (uint8_t)(i == lastk ? BK_SEM_LOADED + b + 1 : 0);
        if (put(c, core, ISA_ENGINE_DMA, in, layer, e)) return -1;
    }
    return 0;
}

static int emit_stores(BkCtx *c, int core, const BkCode *k, int b, int layer, AtlErr *e)
{
    if (k->nst == 0) return put(c, core, ISA_ENGINE_DMA, nop(BK_SEM_COMPUTED + b, -1), layer, e);
    for (int i = 0; i < k->nst; i++) {
        AtlInsn in = k->st[i];
        in.wait = (uint8_t)(i == 0 ? BK_SEM_COMPUTED + b + 1 : 0);
        in.signal = 0;
        if (put(c, core, ISA_ENGINE_DMA, in, layer, e)) return -1;
    }
    return 0;
}

uint32_t bk_cluster_mask(const BkCtx *c, const BkGroup *g, int cluster)
{
    int cpc = c->chip->cores_per_cluster;
    uint32_t m = 0;
    for (int t = 0; t < g->ntiles; t++)
        if (g->tile_core[t] / cpc == cluster) m |= 1u << (g->tile_core[t] % cpc);
    return m;
}

/* Weight multicast: per cluster, the lowest core that runs tiles sends the
 * resident weights to every core of the cluster that runs tiles (DMA mask);
 * the last copy signals WEIGHTS on each of them, and each waits for it on
 * its matrix stream before its first tile. The region is free because the
 * previous layer ended with a barrier. */
static int bk_emit_prologue(BkCtx *c, const BkGroup *g, BkCode *code, AtlErr *e)
{
    int cpc = c->chip->cores_per_cluster;
    for (int cl = 0; cl < c->chip->clusters; cl++) {
        uint32_t m = bk_cluster_mask(c, g, cl);
        if (!m) continue;
        int leader = cl * cpc + bk_lowest_bit(m);
        bk_code_reset(code);
        if (g->prologue(c, g, code, e)) return -1;
        if (code->oom) return atl_fail(e, "out of memory generating code");
        for (int i = 0; i < code->nst; i++) {
            AtlInsn in = code->st[i];
            in.mask = m;
            in.signal = (uint8_t)(i == code->nst - 1 ? BK_SEM_WEIGHTS + 1 : 0);
            if (put(c, leader, ISA_ENGINE_DMA, in, g->layer_id, e)) return -1;
        }
        for (int k = 0; k < cpc; k++)
            if (m >> k & 1 && put(c, cl * cpc + k, ISA_ENGINE_MAT, nop(BK_SEM_WEIGHTS, -1), g->layer_id, e)) return -1;
    }
    return 0;
}

int bk_emit_group(BkCtx *c, BkGroup *g, AtlErr *e)
{
    int rc = -1, layer = g->layer_id;
    BkCode code[2];
    memset(code, 0, sizeof code);
    int *idx = malloc((size_t)(g->ntiles ? g->ntiles : 1) * sizeof *idx);
    if (!idx) return atl_fail(e, "out of memory in the emitter");
    if (g->mcast && bk_emit_prologue(c, g, &code[0], e)) goto done;
    for (int core = 0; core < c->ncores; core++) {
        int n = 0;
        for (int t = 0; t < g->ntiles; t++) if (g->tile_core[t] == core) idx[n++] = t;
        if (g->direct) {
            for (int i = 0; i < n; i++) {
                bk_code_reset(&code[0]);
                if (g->gen(c, g, idx[i], 0, &code[0], e)) goto done;
                if (code[0].oom) { atl_fail(e, "out of memory generating code"); goto done; }
                for (int k = 0; k < code[0].nst; k++)
                    if (put(c, core, ISA_ENGINE_DMA, code[0].st[k], layer, e)) goto done;
            }
            continue;
        }
        int wk[2] = {-1, -1};
        /* L0 */
        if (n > 0) {
            bk_code_reset(&code[0]);
            if (g->gen(c, g, idx[0], g->slot_off, &code[0], e)) goto done;
            wk[0] = g->tile_wkey[idx[0]];
            if (emit_loads(c, core, &code[0], 0, 0, layer, e)) goto done;
        }
        for (int i = 0; i < n; i++) {
            int b = i % 2, nb = (i + 1) % 2;
            BkCode *cur = &code[b], *nx = &code[nb];
            if (i + 1 < n) {
                bk_code_reset(nx);
                if (g->gen(c, g, idx[i + 1], g->slot_off + (uint64_t)nb * g->slot_size, nx, e)) goto done;
                if (nx->oom) { atl_fail(e, "out of memory generating code"); goto done; }
                int key = g->tile_wkey[idx[i + 1]];
                int skip = key >= 0 && wk[nb] == key;
                wk[nb] = key;
                if (emit_loads(c, core, nx, nb, skip, layer, e)) goto done;
            }
            if (cur->oom) { atl_fail(e, "out of memory generating code"); goto done; }
            if (emit_compute(c, core, cur, b, layer, e)) goto done;
            if (emit_stores(c, core, cur, b, layer, e)) goto done;
        }
    }
    /* chip-wide barrier after the layer */
    for (int core = 0; core < c->ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            AtlInsn bar;
            memset(&bar, 0, sizeof bar);
            bar.op = ISA_OP_BARRIER;
            bar.scope = ISA_SCOPE_CHIP;
            bar.bar_id = 0;
            bar.bar_count = (uint16_t)(ISA_NUM_ENGINES * c->ncores);
            if (put(c, core, eng, bar, layer, e)) goto done;
        }
    rc = 0;
done:
    bk_code_free(&code[0]);
    bk_code_free(&code[1]);
    free(idx);
    return rc;
}

int bk_emit_finish(BkCtx *c, AtlErr *e)
{
    for (int core = 0; core < c->ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            AtlInsn end;
            memset(&end, 0, sizeof end);
            end.op = ISA_OP_END;
            if (prog_append(&c->prog, core, eng, &end, 0, e)) return -1;
        }
    return 0;
}

/* weights.c - constants in the weights region of DRAM, through the .abm
 * writer (which deduplicates identical blobs): a lowering's own image of
 * a weight (re-laid out, converted: bk_weight) or a constant tensor in its
 * storage dtype (bk_const_image; bk_const_addr also makes that the
 * tensor's placement, on first use).
 * Guarantees: integers stay integers, exactly or with an error naming the
 * constant and element (never saturated); BkCtx.weight_bytes covers every
 * blob written. */
#include <stdlib.h>
#include "compiler/alloc/alloc.h"
#include "isa/numerics.h"

/* Records a blob the writer placed at off: its tagged address. */
static void placed(BkCtx *c, uint64_t off, size_t bytes, uint64_t *tagged)
{
    *tagged = bk_addr(ABM_REGION_WEIGHTS, off);
    if (off + bytes > c->weight_bytes) c->weight_bytes = off + bytes;
}

int bk_weight(BkCtx *c, const void *data, size_t bytes, uint64_t *tagged, AtlErr *e)
{
    uint64_t off;
    if (abm_add_weight(c->w, data, bytes, &off, e)) return -1;
    placed(c, off, bytes, tagged);
    return 0;
}

int bk_weight_take(BkCtx *c, void *data, size_t bytes, uint64_t *tagged, AtlErr *e)
{
    uint64_t off;
    if (abm_add_weight_take(c->w, data, bytes, &off, e)) return -1;
    placed(c, off, bytes, tagged);
    return 0;
}

int bk_const_image(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e)
{
    const IrTensor *t = &c->g->t[tensor];
    int64_t n = ir_numel(t);
    if (n < 0) return atl_fail(e, "constant '%s' has an unknown shape", t->name);
    int dt = bk_tensor_dt(c, tensor), es = bk_tensor_es(c, tensor);
    if (dt < 0) return atl_fail(e, "constant '%s' has dtype %s, which the chip cannot hold", t->name, ir_dtype_name(t->dtype));
    void *buf = malloc((size_t)(n ? n : 1) * (size_t)es);
    if (!buf) return atl_fail(e, "out of memory placing constant '%s'", t->name);
    int64_t lo = 0, hi = 0;
    if (num_int_range(dt, &lo, &hi)) {
        /* integers stay integers: exact, or an error (never saturated) */
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ir_get_i(t, i);
            if (v < lo || v > hi) {
                free(buf);
                return atl_fail(e, "constant '%s' element %lld = %lld does not fit the chip's %s", t->name, (long long)i,
                                (long long)v, isa_dtype_name(dt));
            }
            num_store_int((uint8_t *)buf + (size_t)i * (size_t)es, dt, v);
        }
    } else
        for (int64_t i = 0; i < n; i++) bk_store_elem(dt, buf, (size_t)i, ir_get_f(t, i));
    return bk_weight_take(c, buf, (size_t)n * (size_t)es, tagged, e);
}

int bk_const_addr(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e)
{
    BkPlace *p = &c->pl[tensor];
    if (p->placed) { *tagged = bk_addr(p->region, p->offset); return 0; }
    if (bk_const_image(c, tensor, tagged, e)) return -1;
    p->placed = 1;
    p->region = ABM_REGION_WEIGHTS;
    p->offset = *tagged & 0xffffffffu;
    p->root = tensor;
    return 0;
}


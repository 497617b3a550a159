/* memplan.c - liveness-based packing of activation buffers (see alloc/memplan.h).
 *
 * Aliases are folded into their root buffer first (the root's lifetime grows
 * to cover every view of it), then each packer places the roots in its own
 * order. Placing one buffer: gather the placed buffers whose lifetimes
 * overlap it, sort them by offset, and walk the gaps between them; first-fit
 * packers take the lowest aligned gap that fits, the best-fit packer the
 * smallest such gap; a buffer with an in-place partner placed (`overwrite`)
 * takes the partner's offset instead when nothing else live is there, since
 * it then costs no memory at all. The winning plan is the smallest footprint; ties go to
 * the earlier strategy so results are deterministic.
 */
#include <stdlib.h>
#include <string.h>
#include "compiler/alloc/memplan.h"

typedef struct {
    uint64_t lo, hi; /* [lo, hi) */
} Range;

typedef struct {
    MemBuffer *bufs;
    int n;
    int *root;        /* root buffer index of each buffer */
    int *first, *last;/* lifetime of each root, widened by its aliases */
    int *order;       /* roots only, in the current packer's order */
    int nroots;
    uint64_t *offset; /* per buffer, for the current packer */
    char *placed;
    Range *scratch;
    int *sort_tmp;
    int has_pairs;    /* some root has an in-place partner */
} Packer;

static const char *const strategy_names[MEMPLAN_NUM_STRATEGIES] = {
    "first-fit", "largest-first best-fit", "area-first", "no-reuse",
};

const char *memplan_strategy_name(MemStrategy s)
{
    return s >= 0 && s < MEMPLAN_NUM_STRATEGIES ? strategy_names[s] : "?";
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return a > 1 ? (x + a - 1) & ~(a - 1) : x;
}

static int is_pow2_or_zero(uint64_t a)
{
    return (a & (a - 1)) == 0;
}

static int range_cmp(const void *a, const void *b)
{
    const Range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

/* Sort keys for the packers; every comparator ends with the index, so the
 * order (and the plan) is the same on every machine. */
typedef int (*KeyCmp)(const Packer *, int, int);

static int cmp_first_use(const Packer *p, int i, int j)
{
    if (p->first[i] != p->first[j]) return p->first[i] - p->first[j];
    return i - j;
}

static int cmp_size(const Packer *p, int i, int j)
{
    uint64_t si = p->bufs[i].size, sj = p->bufs[j].size;
    if (si != sj) return si > sj ? -1 : 1;
    return cmp_first_use(p, i, j);
}

static int cmp_area(const Packer *p, int i, int j)
{
    uint64_t ai = p->bufs[i].size * (uint64_t)(p->last[i] - p->first[i] + 1);
    uint64_t aj = p->bufs[j].size * (uint64_t)(p->last[j] - p->first[j] + 1);
    if (ai != aj) return ai > aj ? -1 : 1;
    return cmp_first_use(p, i, j);
}

/* Merge sort of p->order with a context-aware comparator (qsort has none). */
static void sort_order(Packer *p, KeyCmp cmp, int *tmp)
{
    int n = p->nroots;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = cmp(p, p->order[a], p->order[b]) <= 0 ? p->order[a++] : p->order[b++];
            while (a < mid) tmp[k++] = p->order[a++];
            while (b < hi) tmp[k++] = p->order[b++];
        }
        memcpy(p->order, tmp, sizeof(int) * n);
    }
}

/* Buffers i and j form an in-place pair (either way round). */
static int in_place_pair(const MemBuffer *bufs, int i, int j)
{
    return bufs[i].overwrite == j + 1 || bufs[j].overwrite == i + 1;
}

/* An offset shared with a placed in-place partner of root r that no other
 * placed root live beside r touches (the first such partner's), or
 * UINT64_MAX. */
static uint64_t shared_offset(const Packer *p, int r)
{
    uint64_t size = p->bufs[r].size, align = p->bufs[r].align;
    for (int k = 0; k < p->nroots; k++) {
        int q = p->order[k];
        if (!p->placed[q] || !in_place_pair(p->bufs, r, q)) continue;
        uint64_t at = p->offset[q];
        if (align > 1 && at % align) continue;
        int free = 1;
        for (int j = 0; j < p->nroots && free; j++) {
            int o = p->order[j];
            if (!p->placed[o] || (in_place_pair(p->bufs, r, o) && p->offset[o] == at)) continue;
            if (p->last[o] < p->first[r] || p->last[r] < p->first[o]) continue;
            free = p->offset[o] + p->bufs[o].size <= at || at + size <= p->offset[o];
        }
        if (free) return at;
    }
    return UINT64_MAX;
}

/* Lowest (or best-fitting) aligned offset for root r among placed roots. */
static uint64_t find_gap(Packer *p, int r, int best_fit)
{
    uint64_t size = p->bufs[r].size, align = p->bufs[r].align;
    uint64_t shared = p->has_pairs ? shared_offset(p, r) : UINT64_MAX;
    if (shared != UINT64_MAX) return shared;
    int nr = 0;
    for (int k = 0; k < p->nroots; k++) {
        int o = p->order[k];
        if (!p->placed[o]) continue;
        if (p->last[o] < p->first[r] || p->last[r] < p->first[o]) continue;
        p->scratch[nr++] = (Range){p->offset[o], p->offset[o] + p->bufs[o].size};
    }
    qsort(p->scratch, nr, sizeof(Range), range_cmp);
    uint64_t cursor = 0, best = UINT64_MAX, best_slack = UINT64_MAX;
    for (int k = 0; k <= nr; k++) {
        uint64_t start = align_up(cursor, align);
        uint64_t end = k < nr ? p->scratch[k].lo : UINT64_MAX;
        if (start <= end && end - start >= size) {
            uint64_t slack = end - start - size; /* open end: UINT64_MAX-ish, loses best-fit */
            if (!best_fit) return start;
            if (slack < best_slack) { best_slack = slack; best = start; }
        }
        if (k < nr && p->scratch[k].hi > cursor) cursor = p->scratch[k].hi;
    }
    return best;
}

static uint64_t run_strategy(Packer *p, MemStrategy s)
{
    static const KeyCmp keys[MEMPLAN_NUM_STRATEGIES] = {
        [MEMPLAN_FIRST_FIT] = cmp_first_use, [MEMPLAN_LARGEST_FIRST] = cmp_size,
        [MEMPLAN_AREA_FIRST] = cmp_area, [MEMPLAN_NO_REUSE] = cmp_first_use,
    };
    memset(p->placed, 0, (size_t)p->n);
    sort_order(p, keys[s], p->sort_tmp);
    uint64_t footprint = 0, next = 0;
    for (int k = 0; k < p->nroots; k++) {
        int r = p->order[k];
        uint64_t off;
        if (s == MEMPLAN_NO_REUSE) {
            off = align_up(next, p->bufs[r].align);
            next = off + p->bufs[r].size;
        } else {
            off = find_gap(p, r, s == MEMPLAN_LARGEST_FIRST);
        }
        p->offset[r] = off;
        p->placed[r] = 1;
        if (off + p->bufs[r].size > footprint) footprint = off + p->bufs[r].size;
    }
    return footprint;
}

/* Resolves alias chains; fails on cycles and out-of-bounds views. */
static int resolve_aliases(Packer *p, AtlErr *e)
{
    for (int i = 0; i < p->n; i++) {
        int r = i, steps = 0;
        uint64_t off = 0;
        while (p->bufs[r].alias_of >= 0) {
            if (p->bufs[r].alias_of >= p->n)
                return atl_fail(e, "memplan: buffer %d aliases buffer %d, which does not exist", r, p->bufs[r].alias_of);
            off += p->bufs[r].alias_offset;
            r = p->bufs[r].alias_of;
            if (++steps > p->n) return atl_fail(e, "memplan: buffer %d is part of an alias cycle", i);
        }
        if (off > p->bufs[r].size || p->bufs[i].size > p->bufs[r].size - off)
            return atl_fail(e, "memplan: view %d (offset %llu, %llu bytes) lies outside buffer %d (%llu bytes)", i,
                            (unsigned long long)off, (unsigned long long)p->bufs[i].size, r,
                            (unsigned long long)p->bufs[r].size);
        p->root[i] = r;
        p->bufs[i].offset = off; /* relative to root until the end */
    }
    for (int i = 0; i < p->n; i++) { p->first[i] = p->bufs[i].first; p->last[i] = p->bufs[i].last; }
    for (int i = 0; i < p->n; i++) {
        int r = p->root[i];
        if (p->bufs[i].first < p->first[r]) p->first[r] = p->bufs[i].first;
        if (p->bufs[i].last > p->last[r]) p->last[r] = p->bufs[i].last;
    }
    return 0;
}

int memplan_assign(MemBuffer *bufs, int n, MemPlanResult *res, AtlErr *e)
{
    memset(res, 0, sizeof *res);
    for (int i = 0; i < n; i++) {
        if (bufs[i].first > bufs[i].last)
            return atl_fail(e, "memplan: buffer %d has first use %d after last use %d", i, bufs[i].first, bufs[i].last);
        if (!is_pow2_or_zero(bufs[i].align))
            return atl_fail(e, "memplan: buffer %d alignment %llu is not a power of two", i,
                            (unsigned long long)bufs[i].align);
    }
    if (n == 0) return 0;
    Packer p = {.bufs = bufs, .n = n};
    p.root = malloc(sizeof(int) * n);
    p.first = malloc(sizeof(int) * n);
    p.last = malloc(sizeof(int) * n);
    p.order = malloc(sizeof(int) * n);
    p.offset = malloc(sizeof(uint64_t) * n);
    uint64_t *best = malloc(sizeof(uint64_t) * n);
    p.placed = malloc((size_t)n);
    p.scratch = malloc(sizeof(Range) * n);
    p.sort_tmp = malloc(sizeof(int) * n);
    int rc = -1;
    if (!p.root || !p.first || !p.last || !p.order || !p.offset || !best || !p.placed || !p.scratch || !p.sort_tmp) {
        atl_fail(e, "memplan: out of memory for %d buffers", n);
        goto done;
    }
    if (resolve_aliases(&p, e)) goto done;
    for (int i = 0; i < n; i++) {
        if (p.root[i] != i) continue;
        p.order[p.nroots++] = i;
        res->sum_of_buffers += bufs[i].size;
        int q = bufs[i].overwrite - 1;
        if (q < -1 || q >= n || q == i || (q >= 0 && bufs[q].alias_of >= 0)) {
            atl_fail(e, "memplan: buffer %d overwrites buffer %d, which is not another root buffer", i, q);
            goto done;
        }
        if (q >= 0) p.has_pairs = 1;
    }
    res->footprint = UINT64_MAX;
    for (int s = 0; s < MEMPLAN_NUM_STRATEGIES; s++) {
        uint64_t f = run_strategy(&p, (MemStrategy)s);
        res->by_strategy[s] = f;
        if (f < res->footprint) {
            res->footprint = f;
            res->winner = (MemStrategy)s;
            memcpy(best, p.offset, sizeof(uint64_t) * n);
        }
    }
    for (int i = 0; i < n; i++) bufs[i].offset = best[p.root[i]] + (p.root[i] == i ? 0 : bufs[i].offset);
    rc = 0;
done:
    free(p.root); free(p.first); free(p.last); free(p.order);
    free(p.offset); free(best); free(p.placed); free(p.scratch); free(p.sort_tmp);
    return rc;
}

/* Root of buffer i and the offset of i inside it; -1 on a broken chain. */
static int root_of(const MemBuffer *bufs, int n, int i, uint64_t *off)
{
    *off = 0;
    for (int steps = 0; bufs[i].alias_of >= 0; steps++) {
        if (steps > n || bufs[i].alias_of >= n) return -1;
        *off += bufs[i].alias_offset;
        i = bufs[i].alias_of;
    }
    return i;
}

void memplan_subset(const MemBuffer *all, const int *idx, int m, MemBuffer *out)
{
    for (int k = 0; k < m; k++) {
        out[k] = all[idx[k]];
        int q = all[idx[k]].overwrite - 1;
        out[k].overwrite = 0;
        for (int j = 0; q >= 0 && j < m; j++)
            if (idx[j] == q) out[k].overwrite = j + 1;
    }
}

int memplan_verify(const MemBuffer *bufs, int n, AtlErr *e)
{
    for (int i = 0; i < n; i++) {
        uint64_t oi, oj;
        int ri = root_of(bufs, n, i, &oi);
        if (ri < 0) return atl_fail(e, "memplan: buffer %d has a broken alias chain", i);
        if (bufs[i].offset != bufs[ri].offset + oi)
            return atl_fail(e, "memplan: view %d is not at its parent's offset + %llu", i, (unsigned long long)oi);
        if (ri == i && bufs[i].align > 1 && bufs[i].offset % bufs[i].align)
            return atl_fail(e, "memplan: buffer %d at %llu is not %llu-aligned", i,
                            (unsigned long long)bufs[i].offset, (unsigned long long)bufs[i].align);
        for (int j = i + 1; j < n; j++) {
            if (root_of(bufs, n, j, &oj) == ri) continue; /* same storage by design */
            if (bufs[i].last < bufs[j].first || bufs[j].last < bufs[i].first) continue;
            if (bufs[i].size == 0 || bufs[j].size == 0) continue;
            if (ri == i && root_of(bufs, n, j, &oj) == j && in_place_pair(bufs, i, j) && bufs[i].offset == bufs[j].offset)
                continue;   /* written in place over its partner */
            if (bufs[i].offset + bufs[i].size <= bufs[j].offset || bufs[j].offset + bufs[j].size <= bufs[i].offset)
                continue;
            return atl_fail(e, "memplan: buffers %d and %d are live together and overlap", i, j);
        }
    }
    return 0;
}

/* memo.c - the cost model's memo tables (memo.h): open addressing on a
 * power-of-two table of entries (hash, where the key and the value are in
 * two pools of words), grown at half full. The cost model prices the same
 * DMA ends and merges over and over (every core, every candidate tile
 * shape): these tables hold what it found.
 * Owns: the table and both pools (bk_memo_free). */
#include <stdlib.h>
#include <string.h>
#include "compiler/cost/memo.h"

typedef struct Entry {
    uint64_t hash;
    size_t key, val;            /* offsets into the pools */
    int nkey, nval, used;
} Entry;

/* A front table before the table: the entry last found or stored under
 * each of FRONT hash values, its key beside its value's offset (one cache
 * line). The replay asks for a few hundred ends over and over, candidate
 * after candidate; the table holds tens of thousands (ResNet-50: 82,000,
 * 10 MB with the pools), so a probe there mostly misses the caches. Keys
 * of up to FRONT_WORDS words. */
enum { FRONT = 4096, FRONT_WORDS = 6 };

typedef struct Front {
    uint64_t key[FRONT_WORDS];
    size_t val;
    int nkey, nval;             /* nkey 0: empty */
} Front;

struct BkMemo {
    Entry *tab;
    int cap, n;
    uint64_t *keys, *vals;
    size_t nkeys, capkeys, nvals, capvals;
    Front *front;               /* FRONT entries, or NULL (no memory: the table alone) */
};

BkMemo *bk_memo_new(void)
{
    BkMemo *m = calloc(1, sizeof(BkMemo));
    if (m) m->front = calloc(FRONT, sizeof *m->front);
    return m;
}

void bk_memo_free(BkMemo *m)
{
    if (!m) return;
    free(m->front);
    free(m->tab);
    free(m->keys);
    free(m->vals);
    free(m);
}

static uint64_t hash_words(const uint64_t *w, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

/* 1 when the n words at a and b are equal (a few words: no call to memcmp) */
static int same_words(const uint64_t *a, const uint64_t *b, int n)
{
    uint64_t d = 0;
    for (int i = 0; i < n; i++) d |= a[i] ^ b[i];
    return d == 0;
}

/* Entry e (key at key, nkey words) into its front slot. */
static void to_front(BkMemo *m, uint64_t h, const uint64_t *key, int nkey, size_t val, int nval)
{
    if (!m->front || nkey > FRONT_WORDS) return;
    Front *f = &m->front[h & (FRONT - 1)];
    memcpy(f->key, key, (size_t)nkey * sizeof *key);
    f->val = val;
    f->nkey = nkey;
    f->nval = nval;
}

const uint64_t *bk_memo_find(BkMemo *m, const uint64_t *key, int nkey, int *nval)
{
    if (!m->cap) return NULL;
    uint64_t h = hash_words(key, nkey), mask = (uint64_t)(m->cap - 1);
    if (m->front && nkey <= FRONT_WORDS) {
        const Front *f = &m->front[h & (FRONT - 1)];
        if (f->nkey == nkey && same_words(f->key, key, nkey)) {
            *nval = f->nval;
            return m->vals + f->val;
        }
    }
    for (uint64_t i = h & mask; m->tab[i].used; i = (i + 1) & mask) {
        const Entry *e = &m->tab[i];
        if (e->hash == h && e->nkey == nkey && same_words(m->keys + e->key, key, nkey)) {
            *nval = e->nval;
            to_front(m, h, key, nkey, e->val, e->nval);
            return m->vals + e->val;
        }
    }
    return NULL;
}

static int grow_pool(uint64_t **p, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need) nc *= 2;
    uint64_t *q = realloc(*p, nc * sizeof *q);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int grow_table(BkMemo *m)
{
    int nc = m->cap ? 2 * m->cap : 256;
    Entry *t = calloc((size_t)nc, sizeof *t);
    if (!t) return -1;
    for (int i = 0; i < m->cap; i++) {
        if (!m->tab[i].used) continue;
        uint64_t h = m->tab[i].hash & (uint64_t)(nc - 1);
        while (t[h].used) h = (h + 1) & (uint64_t)(nc - 1);
        t[h] = m->tab[i];
    }
    free(m->tab);
    m->tab = t;
    m->cap = nc;
    return 0;
}

const uint64_t *bk_memo_store(BkMemo *m, const uint64_t *key, int nkey, const uint64_t *val, int nval)
{
    if ((2 * (m->n + 1) > m->cap && grow_table(m)) || grow_pool(&m->keys, &m->capkeys, m->nkeys + (size_t)nkey) ||
        grow_pool(&m->vals, &m->capvals, m->nvals + (size_t)nval))
        return NULL;
    uint64_t h = hash_words(key, nkey), mask = (uint64_t)(m->cap - 1), i = h & mask;
    while (m->tab[i].used) i = (i + 1) & mask;
    m->tab[i] = (Entry){h, m->nkeys, m->nvals, nkey, nval, 1};
    to_front(m, h, key, nkey, m->nvals, nval);
    memcpy(m->keys + m->nkeys, key, (size_t)nkey * sizeof *key);
    memcpy(m->vals + m->nvals, val, (size_t)nval * sizeof *val);
    m->nkeys += (size_t)nkey;
    m->nvals += (size_t)nval;
    m->n++;
    return m->vals + m->tab[i].val;
}

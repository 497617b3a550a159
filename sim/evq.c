/* evq.c - the event queue: a binary min-heap ordered by (time, seq). The
 * sequence number is assigned at push, so events at the same time run in
 * the order they were created: the run is deterministic. The heap array
 * grows geometrically and is reused across runs (no per-event malloc). */
#include <stdlib.h>
#include "sim/sim_int.h"

/* (time, seq) as one 128-bit number: one compare without a data-dependent branch */
static inline int ev_less(const SimEvent *a, const SimEvent *b)
{
    unsigned __int128 ka = (unsigned __int128)a->time << 64 | a->seq, kb = (unsigned __int128)b->time << 64 | b->seq;
    return ka < kb;
}

int evq_push(SimEvq *q, uint64_t time, uint32_t kind, uint32_t arg)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 256;
        SimEvent *h = realloc(q->h, cap * sizeof *h);
        if (!h) return -1;
        q->h = h;
        q->cap = cap;
    }
    SimEvent ev = {time, q->seq++, kind, arg};
    size_t i = q->n++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&ev, &q->h[p])) break;
        q->h[i] = q->h[p];
        i = p;
    }
    q->h[i] = ev;
    return 0;
}

int evq_pop(SimEvq *q, SimEvent *out)
{
    if (!q->n) return 0;
    *out = q->h[0];
    size_t n = --q->n;
    if (!n) return 1;
    SimEvent last = q->h[n];
    /* bottom-up: move the hole to a leaf along the smaller children (one
     * comparison per level), then sift the last element up from there */
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ev_less(&q->h[c + 1], &q->h[c])) c++;
        q->h[i] = q->h[c];
        i = c;
    }
    while (i) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&last, &q->h[p])) break;
        q->h[i] = q->h[p];
        i = p;
    }
    q->h[i] = last;
    return 1;
}

void evq_replace_top(SimEvq *q, uint64_t time, uint32_t kind, uint32_t arg)
{
    SimEvent ev = {time, q->seq++, kind, arg};
    size_t i = 0, n = q->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ev_less(&q->h[c + 1], &q->h[c])) c++;
        if (!ev_less(&q->h[c], &ev)) break;
        q->h[i] = q->h[c];
        i = c;
    }
    q->h[i] = ev;
}

void evq_free(SimEvq *q)
{
    free(q->h);
    q->h = NULL;
    q->n = q->cap = 0;
}

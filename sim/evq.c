/* evq.c - the event queue: a binary min-heap ordered by (time, seq). The
 * sequence number is assigned at push, so events at the same time run in
 * the order they were created: the run is deterministic. The heap array
 * grows geometrically and is reused across runs (no per-event malloc). */
#include <stdint.h>
#include <stdlib.h>
#include "sim/sim_int.h"

/* (time, seq) as one 128-bit number: one compare without a data-dependent branch */
static inline int ev_less(const SimEvent *a, const SimEvent *b)
{
    unsigned __int128 ka = (unsigned __int128)a->time << 64 | a->seq, kb = (unsigned __int128)b->time << 64 | b->seq;
    return ka < kb;
}

/* h[n] always holds an event later than every real one (room for it is
 * kept), so a node whose left child is the last has a right child to
 * compare with, and the sifts need no bounds check for it. */
static const SimEvent ev_end = {UINT64_MAX, UINT64_MAX, 0, 0};

int evq_push(SimEvq *q, uint64_t time, uint32_t kind, uint32_t arg)
{
    if (q->n + 1 >= q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 256;
        SimEvent *h = realloc(q->h, cap * sizeof *h);
        if (!h) return -1;
        q->h = h;
        q->cap = cap;
    }
    SimEvent ev = {time, q->seq++, kind, arg};
    size_t i = q->n++;
    q->h[q->n] = ev_end;
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
    SimEvent last = q->h[n];
    q->h[n] = ev_end;
    if (!n) return 1;
    /* bottom-up: move the hole to a leaf along the smaller children (one
     * comparison per level), then sift the last element up from there */
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (ev_less(&q->h[c + 1], &q->h[c])) c++; /* h[n] is ev_end */
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
        if (ev_less(&q->h[c + 1], &q->h[c])) c++; /* h[n] is ev_end */
        if (!ev_less(&q->h[c], &ev)) break;
        q->h[i] = q->h[c];
        i = c;
    }
    q->h[i] = ev;
}

void evq_reset(SimEvq *q)
{
    q->n = 0;
    q->seq = 0;
    if (q->h) q->h[0] = ev_end;
}

void evq_free(SimEvq *q)
{
    free(q->h);
    q->h = NULL;
    q->n = q->cap = 0;
}

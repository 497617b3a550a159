/* lanes.h - a 128-bit hash of byte runs in four 64-bit lanes, for memo keys.
 *
 * The cost model keys kept segment prices by hashes of what makes them
 * (cost.c: a segment's queues; genkey.c: what generates them). Four
 * independent multiply-xorshift chains, a word to each lane in turn, keep
 * the hashing a small part of the replay it saves; murmur3's finaliser
 * folds the lanes into two words at the end. Not cryptographic: a
 * difference confined to one lane pair is caught by one 64-bit word. */
#ifndef ATOLL_COMPILER_COST_LANES_H
#define ATOLL_COMPILER_COST_LANES_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct Lanes { uint64_t l[4]; unsigned n; } Lanes;

static inline Lanes lanes_start(void)
{
    Lanes h = {{0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull}, 0};
    return h;
}

static inline void lanes_word(Lanes *h, uint64_t w)
{
    uint64_t *x = &h->l[h->n++ & 3];
    *x = (*x ^ w) * 0x9e3779b97f4a7c15ull;
    *x ^= *x >> 29;
}

/* bytes of p: whole 32-byte runs a word to every lane, then words, then
 * the tail bytes as one word */
static inline void lanes_bytes(Lanes *h, const void *p, size_t bytes)
{
    const unsigned char *c = p;
    size_t i = 0;
    for (; i + 32 <= bytes; i += 32) {
        uint64_t w[4];
        memcpy(w, c + i, sizeof w);
        for (int k = 0; k < 4; k++) {
            h->l[k] = (h->l[k] ^ w[k]) * 0x9e3779b97f4a7c15ull;
            h->l[k] ^= h->l[k] >> 29;
        }
    }
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, sizeof w);
        lanes_word(h, w);
    }
    if (i < bytes) {
        uint64_t w = 0;
        for (size_t k = 0; i + k < bytes; k++) w |= (uint64_t)c[i + k] << (8 * k);
        lanes_word(h, w);
    }
}

/* murmur3's finaliser */
static inline uint64_t lanes_fmix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* the two words of the hash */
static inline void lanes_end(const Lanes *h, uint64_t out[2])
{
    out[0] = lanes_fmix(h->l[0] ^ lanes_fmix(h->l[1] + 0x452821e638d01377ull));
    out[1] = lanes_fmix(h->l[2] ^ lanes_fmix(h->l[3] + 0xbe5466cf34e90c6cull));
}
#endif

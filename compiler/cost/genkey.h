/* genkey.h - a segment's memo key from what generates its code (genkey.c).
 *
 * The memo of whole segments (cost.h, bk_flow_keep_segments) keys a price
 * by the fingerprint of the segment's queues, which a call with a bound
 * never builds whole (the replay builds them as it reaches them). This key
 * comes from what the queues are generated from instead: the chip, the
 * context's settings, the layer's whole lowered state, its tiles' cores
 * and the segment's own fields; so a bounded candidate is looked up before
 * any of its code is built. Only for segments whose code reads nothing
 * else (see bk_gen_key). */
#ifndef ATOLL_COMPILER_COST_GENKEY_H
#define ATOLL_COMPILER_COST_GENKEY_H
#include <stdint.h>
#include "compiler/schedule/schedule.h"

/* Words of a generator key (a length no code key has: the two share a memo). */
enum { BK_GEN_KEY = 5 };

/* 1 and key[] when sg's code is a function of what the key hashes, 0 when
 * it may read more (bands, a layer group, a prefetch, a per-kind table,
 * a lowering whose generator reads the graph): then no key. */
int bk_gen_key(const BkCtx *c, const BkSegment *sg, uint64_t key[BK_GEN_KEY]);
#endif

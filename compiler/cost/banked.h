/* banked.h - the cost model's pricing of a DMA's DRAM end when the chip
 * has `[dram] model = banked` (banked.c): requests of access_bytes,
 * merged round-robin with the same DMA of the other cores, rows opened per
 * window of the controller's queue, work on the data bus, bank groups,
 * ranks and banks of each channel. Used by flow.c. */
#ifndef ATOLL_COMPILER_COST_BANKED_H
#define ATOLL_COMPILER_COST_BANKED_H
#include <stdint.h>
#include "isa/config.h"
#include "isa/isa.h"

/* Most DMAs priced together as lock-step siblings. */
#define BK_BANKED_MAXPART 64

/* Work (core cycles) of one participant on banked server `server` (numbered
 * from 0 per bk_banked_servers), served as `bursts` requests. */
typedef struct BkBankedUse { int server; uint64_t work, bursts; } BkBankedUse;

typedef struct BkBanked BkBanked;
/* NULL on OOM; bk_banked_free frees. */
BkBanked *bk_banked_new(const AtlChip *ch);
void bk_banked_free(BkBanked *b);
int bk_banked_servers(const BkBanked *b);
/* The DRAM end `end` (0 dst: writes, 1 src: reads) of part[0..npart):
 * the same instruction (shape, strides, dtype) issued by npart cores, in
 * core order, starting at start[] (core cycles; NULL: together); each
 * participant's equal share of the work of their merged requests,
 * *use[0..*nuse) (valid until the next call).
 * `other`: the banks (bit bank % 64 of a channel) that requests of the
 * other direction in flight use: the controller turns between the
 * directions, and those requests take their banks to their rows. *banks:
 * the banks these requests use. -1 on OOM. */
int bk_banked_end(BkBanked *b, const AtlInsn *const *part, const uint64_t *start, int npart, int end, uint64_t other,
                  const BkBankedUse **use, int *nuse, uint64_t *banks);
/* Core cycles from a request's service to its data: rcd + cl + bl
 * (read) or rcd + cwl + bl (write), and its admission cycle. */
uint64_t bk_banked_latency(const BkBanked *b, int write);
#endif

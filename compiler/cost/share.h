/* share.h - the servers of the cost model's replay (share.c): DRAM
 * channels, NoC links and DMA ports shared by DMA flows as the simulator
 * shares them (processor sharing, bursts delivered in the order of their
 * fluid finish, ghosts; docs/timing.md). Used by cost.c only. */
#ifndef ATOLL_COMPILER_COST_SHARE_H
#define ATOLL_COMPILER_COST_SHARE_H
#include <stdint.h>

typedef struct BkShare BkShare;
/* nservers servers, idle at time 0; NULL on OOM. bk_share_free frees. */
BkShare *bk_share_new(int nservers);
void bk_share_free(BkShare *s);
/* Every server idle at time 0, no uses. */
void bk_share_reset(BkShare *s);
/* Server sv serves `ports` flows at full speed at once (default 1). */
void bk_share_set_ports(BkShare *s, int sv, int ports);
/* A flow's use of server sv, `work` cycles of service in `bursts` bursts,
 * joins at real time t (not before the last join anywhere); returns the
 * use's id, -1 on OOM. */
int bk_share_join(BkShare *s, int sv, uint64_t work, uint64_t bursts, double t);
/* Projected delivery of use u on its server (re-projected when a flow
 * joined there since; later joins only delay it). */
double bk_share_due(BkShare *s, int u);
/* Use u's flow was delivered: it stays on its server until its share is
 * used up (a ghost), and its delivery time no longer moves. */
void bk_share_leave(BkShare *s, int u);
#endif

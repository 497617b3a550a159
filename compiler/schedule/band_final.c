/* band_final.c - row and channel bands once the schedule is complete:
 * every segment's output cells published in order, then the cells each
 * load reads from DRAM collected by walking every table (bk_band_code
 * marks them), so that the final cost and the emitter store to DRAM
 * exactly those cells.
 * Its own file because it walks the schedule (schedule.c), which calls the
 * rewrite (bands.c). */
#include <string.h>
#include "compiler/schedule/schedule.h"

int bk_band_finalize(BkCtx *c, BkSchedule *s, AtlErr *e)
{
    for (int t = 0; t < c->g->nt; t++)
        if (c->pl[t].band) {
            size_t cells = (size_t)c->band[t].C * (size_t)c->band[t].H;
            memset(c->band[t].owner, -2, cells);
            memset(c->band[t].need, 0, cells);
            for (int ch = 0; ch < c->band[t].C; ch++) c->band[t].run[ch] = c->band[t].C;
            c->band[t].need_all = 0;
            c->band[t].npend = 0;
        }
    c->band_final = 0;
    for (int i = 0; i < s->n; i++) bk_band_publish(c, &s->seg[i]);
    /* the cells every load reads from DRAM (marked by the rewrite) */
    BkTable tab = {0};
    BkWalk walk;
    memset(&walk, 0, sizeof walk);
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        const BkSegment *sg = &s->seg[i];
        for (int core = sg->cores.first; core < sg->cores.first + sg->cores.count; core++) {
            if (bk_sched_table(c, sg, core, &tab, e)) goto done;
            for (int j = 0; j < tab.n; j++) {
                const BkAction *a = &tab.a[j];
                if ((a->kind == BK_ACT_LOAD || a->kind == BK_ACT_COPY || a->kind == BK_ACT_MCAST) &&
                    !bk_walk_code(c, sg, &walk, a, core, e))
                    goto done;
            }
        }
    }
    bk_band_apply_marks(c);
    c->band_final = 1;
    rc = 0;
done:
    bk_table_free(&tab);
    bk_walk_free(&walk);
    return rc;
}

/* layer.c - the parts of a lowered layer (target/layer.h) that every
 * lowering sets the same way: its tiles and weight keys, its list of
 * DMA-only copies, its candidate tile shapes, and freeing it. */
#include <stdlib.h>
#include <string.h>
#include "compiler/target/layer.h"

int bk_set_tiles(BkLayer *ly, int ntiles, int run, AtlErr *e)
{
    if (run < 1 || ntiles % run) return atl_fail(e, "internal: %d tiles are not whole runs of %d", ntiles, run);
    free(ly->tile_wkey);
    ly->tile_wkey = malloc((size_t)(ntiles ? ntiles : 1) * sizeof *ly->tile_wkey);
    if (!ly->tile_wkey) return atl_fail(e, "out of memory planning tiles");
    for (int t = 0; t < ntiles; t++) ly->tile_wkey[t] = -1;
    ly->ntiles = ntiles;
    ly->tile_run = run;
    return 0;
}

int bk_push_copy(BkLayer *ly, int *cap, const BkCopy *cp)
{
    if (ly->ncopies == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        BkCopy *p = realloc(ly->copies, (size_t)nc * sizeof *p);
        if (!p) return -1;
        ly->copies = p;
        *cap = nc;
    }
    ly->copies[ly->ncopies++] = *cp;
    return 0;
}

int bk_push_shape(BkLayer *ly, const void *shape, size_t size, int64_t tiles, AtlErr *e)
{
    BkShapes *s = &ly->shapes;
    if (s->n && s->size != size) return atl_fail(e, "internal: tile shapes of two sizes");
    if (s->n == s->cap) {
        int nc = s->cap ? 2 * s->cap : 64;
        void *v = realloc(s->v, (size_t)nc * size);
        if (v) s->v = v;
        int64_t *t = realloc(s->tiles, (size_t)nc * sizeof *t);
        if (t) s->tiles = t;
        if (!v || !t) return atl_fail(e, "out of memory in the tile search");
        s->cap = nc;
    }
    s->size = size;
    memcpy((char *)s->v + (size_t)s->n * size, shape, size);
    s->tiles[s->n++] = tiles;
    return 0;
}

void bk_layer_free(BkLayer *ly)
{
    free(ly->tile_wkey);
    ly->tile_wkey = NULL;
    free(ly->copies);
    ly->copies = NULL;
    free(ly->lw.aux);
    ly->lw.aux = NULL;
    free(ly->chain);
    ly->chain = NULL;
    for (int i = 0; i < ly->nlook; i++) free(ly->look[i].shape);
    ly->nlook = 0;
    free(ly->shapes.v);
    free(ly->shapes.tiles);
    memset(&ly->shapes, 0, sizeof ly->shapes);
}

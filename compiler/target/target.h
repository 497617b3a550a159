/* target.h - the backend's base: the compilation context every backend
 * phase shares (the graph, the chip, the .abm writer, where each tensor
 * lives), the one mapping from graph dtypes to the chip's storage dtypes,
 * and the node failure message.
 *
 * The backend's folders, lowest first (a file may include its own
 * folder's headers and those of lower folders, never a higher one;
 * test/cli/layering.sh checks it and that no two backend files depend on
 * each other in a circle):
 *   target/    this header, the lowered-layer type and instruction builders
 *   legalize/  rewrites of ops the chip runs as other ops; fusion patterns
 *   alloc/     DRAM placement of tensors and weights; LMEM slots and the
 *              resident region
 *   lower/     one op -> one lowered layer (BkLayer): tiles, LMEM layout,
 *              tile generator, slice inference, candidate tile shapes
 *   schedule/  the schedule: core sets, tiles on cores, barriers, the
 *              time-step table (the one place the order is decided)
 *   cost/      the cost model: replays the schedule with isa/timing.h
 *   group/     choices priced by the cost model: the tile-shape search
 *              (layer groups and their slicing will live here)
 *   emit/      the schedule -> instruction streams and .abm records
 *   backend/   the backend's driver (bk_compile) and its API backend/backend.h
 *   driver/    above the backend: an ONNX file through the front end and the
 *              backend into an .abm (what atoll compile and atl_compile run)
 * docs/backend.md describes the flow. */
#ifndef ATOLL_COMPILER_TARGET_TARGET_H
#define ATOLL_COMPILER_TARGET_TARGET_H
#include <stddef.h>
#include <stdint.h>
#include "compiler/ir/ir.h"
#include "isa/abm.h"
#include "isa/config.h"
#include "isa/isa.h"
#include "util/err.h"

/* Most data inputs an elementwise layer reads (legalize/ splits longer
 * variadic ops into chains of at most this many). */
#define BK_MAXIN 4

/* Where a tensor lives. */
typedef struct BkPlace {
    int root;                     /* tensor whose storage it shares (itself if none) */
    int region;                   /* ABM_REGION_*, -1 not placed */
    uint64_t offset;              /* inside the region (for views: root's) */
    int placed;
    int internal;                 /* lives only in LMEM inside a layer group: never in DRAM, not listed */
    int in_sram;                  /* lives in cluster SRAM at `offset`: placement split, the running
                                   * cluster's; placement chip, every cluster's (BkCtx.sram_copies) */
    int band;                     /* bands (BkCtx.bands): also at band_off in every cluster's SRAM,
                                   * which holds the cells that cluster's cores wrote (BkCtx.band) */
    uint64_t band_off;
    int over_in;                  /* its bytes overlap its producer's input (a pointwise conv's
                                   * output over its dying input, alloc/place.c): the producer
                                   * cuts no output-channel chunks */
} BkPlace;

/* Bands (--sram-activations bands, schedule/bands.c): a tensor placed
 * in DRAM as always that also lives at BkPlace.band_off in every cluster's
 * SRAM, where cluster k holds the cells (channel c, row r; NCHW, batch 1)
 * its cores wrote (owner[c x H + r] == k): a row band's rows of every
 * channel, a channel band's channels of every row, or any mix a tiling
 * gives. Compactly: only a window of `rows` rows per channel plane
 * (bk_band_window), so a plane's SRAM stride is rows x rowb; a cell
 * outside its writer's window has no owner. A cell is written to DRAM
 * only when a cluster that does not own it reads it (need[c x H + r]),
 * or when no cluster owns it. Per root tensor; arrays malloc'd by
 * placement (alloc/place.c), freed by the driver. */
typedef struct BkBand {
    int C, H;                     /* channel planes (N x C: every image's) and rows */
    int images;                   /* N: the images whose planes these are */
    int rows;                     /* rows of each cluster's window (bk_band_window) */
    int shard;                    /* 0: every plane in each cluster's window; else a channel
                                   * shard: cluster k keeps channels [k x shard, (k+1) x shard)
                                   * of each image's C / images (bk_band_plane) */
    uint64_t rowb;                /* bytes of one row (W x element size) */
    uint64_t dram, size;          /* tagged DRAM address and bytes */
    int8_t *owner;                /* per cell: the cluster that wrote it; -2 several or unknown */
    uint8_t *need;                /* per cell: read from DRAM by a cluster that does not own it */
    int need_all;                 /* read whole by a DMA that is not cut into cells */
    int near;                     /* rows either side of a row its consumers' windows may
                                   * read (BK_BAND_NEAR when not all are known): before
                                   * the schedule is final a cell goes to DRAM when a row
                                   * this near holds another cluster's cell */
    int *run;                     /* per channel: the end of the run of channels from it
                                   * whose owners are the same in every row */
    struct BkBandMark *pend;      /* marks of need not applied yet (schedule/bands.c applies
                                   * them where need is read); malloc'd, freed by the driver */
    int npend, cappend;
} BkBand;

/* The plane of cluster k's window that holds plane p of b (image p /
 * (C / images), its channel p mod that), -1 when k's window does not
 * hold it (a channel shard's other clusters' channels). */
static inline int bk_band_plane(const BkBand *b, int k, int p)
{
    if (!b->shard) return p;
    int ci = b->C / (b->images > 0 ? b->images : 1), ch = p % ci, lo = k * b->shard;
    return ch >= lo && ch < lo + b->shard ? p / ci * b->shard + ch - lo : -1;
}

/* Cells of a BkBand marked needed: channels ch + i x cstep (i < nch), in
 * each the rows r0 + q x rstep (q < nr). */
typedef struct BkBandMark {
    int ch, cstep, nch, r0, rstep, nr;
} BkBandMark;

/* BkBand.near when a consumer's reach is not known (a 7x7 window's halo) */
#define BK_BAND_NEAR 3

/* The address tag of a tensor in cluster SRAM (placement split): lowerings
 * build their DMAs with DRAM operands as always; the instruction lists
 * (target/code.c) turn an operand carrying this tag into an SRAM operand
 * at its offset, so the cost model and the emitter see the real space. */
#define BK_SRAM_TAG_REGION 7

/* The compilation context. The driver (backend/compile.c) owns it and
 * every array in it. */
typedef struct BkCtx {
    const IrGraph *g;
    const AtlChip *chip;
    AbmWriter *w;
    int dt;                       /* storage dtype of float tensors (ISA_F32/F16/BF16) */
    int es;                       /* its size in bytes */
    int ncores;                   /* cores the layer being lowered is spread over (the size of
                                   * its core set; the whole chip in the one-layer schedule) */
    int keep_activations;         /* BkOptions.keep_activations */
    int grouping;                 /* 1: layer groups allowed (BkOptions.group auto) */
    int group_max;                /* most layers in a group (BkOptions.group_max; 0: no limit) */
    int weights_resident, weights_stream; /* a group's weights (BkOptions.group_weights):
                                   * never streamed; streamed by every chain that can, such
                                   * chains taken before layers alone; neither: resident when
                                   * they fit, else streamed where the cost model prefers */
    int cslice_never, cslice_only; /* BkOptions.group_cslice: never; only C-sliced chains,
                                   * taken before layers alone */
    int sram_never, sram_always; /* inputs in SRAM (BkOptions.sram_input): never; only
                                   * those shapes where a layer may; neither: the cost
                                   * model chooses */
    int wsram_never, wsram_always; /* conv weights staged in SRAM (BkOptions.sram_weights), as above */
    int sram_pair;                /* BkOptions.sram_pair: shapes staging input and weights offered */
    int prefetch_never;           /* BkOptions.prefetch: no weight prefetch across barriers */
    int prefetch_spread;          /* BkOptions.prefetch SPREAD: multicast weights always in spread pieces */
    int band_near;                /* BkOptions.band_near: 0, or every BkBand.near */
    int no_shards;                /* BkOptions.no_shards: bands without channel shards (BkBand.shard) */
    int no_chain_pack;            /* BkOptions.no_chain_pack: a chain's row buffers never share bytes */
    int tile_images;              /* BkOptions.tile_images: 0, or the images every pointwise
                                   * conv tile covers where such a tile fits (lower/conv.c) */
    uint64_t slot;                /* LMEM bytes of one slot (no resident region) */
    uint64_t align;               /* LMEM operand alignment */
    BkPlace *pl;                  /* per tensor */
    int *skip;                    /* per node: 1 = absorbed into another layer */
    int *gelu_src;                /* per node: Gelu pattern input tensor, -1 none */
    int *act_on;                  /* per node: 1 = apply IrNode.act in the epilogue */
    int *tail;                    /* per node: a residual Add absorbed into its epilogue, -1 none */
    uint64_t weight_bytes, act_bytes, act_sum, io_bytes;
    /* placement split (BkOptions.placement): the graph is the instance's
     * (micro-batch images); io tensors are placed at io_scale times its size
     * (the whole batch), activations that fit in sram_cap bytes in SRAM */
    int split, io_scale, clusters;   /* clusters: how many run instances (each its own copy
                                      * of the DRAM activation region) */
    uint64_t sram_cap, act_sram;
    /* placement chip with activations in SRAM (BkOptions.sram_acts): the
     * clusters that each hold a copy (every one of the chip's); 0: none */
    int sram_copies;
    /* placement chip with bands (BkOptions.sram_acts bands or rows): the
     * clusters (0: off), per tensor its band state (roots with
     * BkPlace.band), and 1 once the schedule is final (schedule/bands.c:
     * stores then write to DRAM exactly the cells other clusters read) */
    int bands;
    BkBand *band;
    int band_final;
    /* the tile search's price of a weight copy beyond one on the chip and
     * of a re-layout byte (group/search.c), in multiples of its DRAM time
     * (>= 1; BkOptions.band_price) */
    uint64_t band_wprice, band_rprice;
    int band_chans;               /* channel bands too (a cell keeps its owner whatever the tiling,
                                   * output-channel distribution, staging gathers; 0: rows only) */
    /* K split across clusters (BkOptions.kbands; lower/kbands.c): where
     * the cost model prices it lower unless never or always (where it may);
     * the partials' scratch at the end of the activation region (kb_base, 0
     * until the first) and its bytes */
    int kbands_never, kbands_always;
    uint64_t kb_base, kb_bytes;
    int halo_never;               /* BkOptions.no_halo_stage (schedule/bands.c, halo_ok) */
    int dw_matrix;                /* depthwise convs on the matrix unit only (BkOptions.dw_matrix;
                                   * lower/dwvec.c: else the vector unit is offered too) */
    /* the tile search's last band-priced layer (group/search.c): its id
     * and the cycles its busiest core's DMA engine idles in its plan, the
     * room the next layer's weight prefetch may use (-1: none yet) */
    int pf_layer;
    uint64_t pf_room;
    /* bands: 1 while the tile search records each way's cheapest shape
     * (BkLayer.look) for the band way over the chain (backend/compile.c,
     * look_resolve; group/look.c) */
    int band_look;
    int band_look_margin;         /* percent: a way priced more above the pick is not recorded */
    int band_look_mode;           /* BkOptions.band_look */
    uint64_t sram_stage;          /* SRAM offset of a conv's input staging ("Inputs in cluster
                                   * SRAM"): 0, or with row bands above the banded tensors */
    /* staged (several graphs, one per stage, in one variant): where each io
     * tensor of this stage's graph lives in the variant's io region, by
     * tensor index (offset + 1; 0: not an io tensor here), and that
     * region's size; NULL: place.c packs the io region itself */
    const uint64_t *io_fixed;
    uint64_t io_fixed_bytes;
    /* placement pipeline: the stage boundaries among this stage's io
     * tensors, which live in the running cluster's SRAM (its input) or in
     * the next stage's (its output, moved there by the emitter), by tensor
     * index (SRAM offset + 1; 0: not one); NULL: none */
    const uint64_t *io_sram;
    /* the cost model's DMA pricer (cost/flow.c) with its memo, kept across
     * bk_cost_segment calls: an end's work is a function of its memo key,
     * so sharing it changes no estimate, and the tile search prices the
     * same tile loads shape after shape; NULL: one per call. Built for
     * `chip`; the driver owns it. */
    struct BkFlowPlanner *flow;
} BkCtx;

/* dtype.c: the storage dtype (ISA) of tensor t on the chip, the one mapping
 * of docs/backend.md "Data types": float tensors (f32, f16, bf16, f64) in
 * the backend's storage dtype BkCtx.dt; i8 -> i8; bool -> i8 (0/1); i16,
 * u8 -> i16; i32, i64, u16, u32 -> i32 (no 64-bit integers on the chip);
 * -1 for the others (u64, strings, complex). bk_tensor_es: its size in
 * bytes. */
int bk_tensor_dt(const BkCtx *c, int t);
int bk_tensor_es(const BkCtx *c, int t);
int bk_isa_dtype(int irdt);        /* IR dtype -> ISA dtype, -1 unsupported */
int bk_is_int_dt(int isa_dt);      /* 1 for ISA_I8/I16/I32 */
uint32_t bk_abm_dtype(int isa_dt); /* the .abm tensor-table dtype of an ISA dtype */
/* Value v converted to dtype dt (float: rounded; integer: rounded half
 * even and saturated, as the chip converts) and stored as element i. */
void bk_store_elem(int dt, void *dst, size_t i, double v);
/* A region-tagged DRAM address (docs/firmware.md). */
uint64_t bk_addr(int region, uint64_t off);

/* Node failure message: "node 'NAME' (OP): ...". */
int bk_fail(const BkCtx *c, int node, AtlErr *e, const char *fmt, ...) ATL_PRINTF(4, 5);
#endif

/* layer.h - a lowered layer: what the lower phase hands to the schedule.
 *
 * A BkLayer is one ONNX node (or a constant graph output) lowered for the
 * chip: its output cut into tiles, the LMEM one tile needs (a slot; a
 * region below the two slots may be resident for the whole layer), a
 * generator that writes a tile's loads, computes and stores for a given
 * slot base (BkCode: three separate lists, so the schedule can place the
 * boundary DMA and the LMEM-only compute independently), a weight key
 * per tile (consecutive tiles of a core with the same key share the
 * weights in the slot), and, when the lowering leaves the tile shape
 * open, the candidate shapes the group search (group/) prices with the
 * cost model. Which core runs a tile, in which order and slot, with
 * which sync, is the schedule's (schedule/schedule.h), never the
 * layer's. A layer group (group/) is one or more layers run as one unit.
 *
 * Also here: the instruction builders every lowering uses (code.c), with
 * the ISA's conventions (DMA strides in bytes, vector strides in
 * elements, outermost first). */
#ifndef ATOLL_COMPILER_TARGET_LAYER_H
#define ATOLL_COMPILER_TARGET_LAYER_H
#include <stdint.h>
#include "compiler/target/target.h"

/* Instructions of one tile. ld_w[i] marks a load of weights that may be
 * skipped when the same slot already holds them (same weight key; ld_w
 * holds at least capld flags). The sync fields (wait/signal) and `layer`
 * are left 0: the emitter sets them. spare and spare_w (capacities
 * capspare, capspare_w) are buffers a rewrite of a whole list builds
 * into, then swaps with the list (bk_code_swap): the pricing rewrites
 * lists tile after tile without allocating each time. */
typedef struct BkCode {
    AtlInsn *ld, *cp, *st;
    uint8_t *ld_w;
    int nld, ncp, nst, capld, capcp, capst;
    int oom;
    AtlInsn *spare;
    uint8_t *spare_w;
    int capspare, capspare_w;
} BkCode;

typedef struct BkLayer BkLayer;
typedef int (*BkTileGen)(BkCtx *c, const BkLayer *ly, int tile, uint64_t slot, BkCode *code, AtlErr *e);

#define BK_MAXSTEP 168   /* integer Pow: 5 steps per exponent bit (lower/elem_prog.c) */

/* An elementwise step on registers: reg < nin are the loaded inputs, the
 * others scratch; reg `out` is stored. */
typedef struct BkStep { int op; int dst, a, b; float alpha, beta; } BkStep;

/* Registers of a reduction / softmax tile (lower/vec.c; its program is
 * BkLow.steps): the input box and a scratch of its size, the reduced box
 * (stored by reductions) and a second reduced one (e.g. the row maximum).
 * A v.rsum / v.rmax step reduces its full-box `a` along the reduced axis
 * into its reduced `dst`; another step whose dst is a full box runs over
 * the full box (reduced operands broadcast along the reduced axis),
 * otherwise over the reduced box. */
enum { BK_R_IN, BK_R_ACC, BK_R_OUT, BK_R_MAX, BK_R_NREGS };

typedef enum {
    BK_K_CONV, BK_K_POOL, BK_K_MM, BK_K_ELEM, BK_K_REDUCE, BK_K_SOFTMAX, BK_K_LAYERNORM, BK_K_MOVE,
    BK_K_ARG, BK_K_LOSS, BK_K_TRILU, BK_K_GATHER_EL, BK_K_GATHER_ND, BK_K_ONEHOT, BK_K_TOPK,
    BK_K_SCATTER_EL, BK_K_SCATTER_ND, BK_K_REVSEQ,
    BK_K_CHAIN,                   /* a layer group of window layers (lower/chain.c) */
    BK_K_ATTN                     /* an attention group: MatMul, Softmax, MatMul (lower/attn.c) */
} BkKind;

/* Lowering state of one layer; which members are used depends on kind. */
typedef struct BkLow {
    BkKind kind;
    /* storage dtype (ISA) and element size of the layer's data: its output's
     * (bk_tensor_dt); xdt / xes: its data inputs' (differs only for Cast).
     * Set by the lowerings that handle integer tensors (move, gather, pad,
     * elementwise, reductions); the float-only ones use BkCtx.dt. */
    int dt, es, xdt, xes;
    /* conv / pool: NCHW geometry, tile = (group chunk, n, output rows,
     * output columns, k chunk) */
    int N, C, H, W, OC, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups;
    int pool_op, count_pad;
    int gchunk, rows, cols, kchunk; /* per tile: groups, output rows, output columns, input channels */
    int ngc, nrc, nwc, nkc;       /* chunks along groups, rows, columns, input channels */
    int nb;                       /* conv: images a tile covers (0 or 1: one; lower/conv.c) */
    /* K split across clusters (lower/kbands.c; docs/backend.md "K split
     * across clusters"): kb_parts clusters (0: off); phase 1, the conv,
     * cluster q = kci / (nkc / kb_parts) sums its input channels into part
     * q of the f32 partials at kb_part ([part][OC][OH][OW]); phase 2 adds
     * the parts, the bias and the activation and writes y; kb_sram, the
     * cluster SRAM offset + 1 where cluster q keeps part q of its own band
     * of output channels (q OC / kb_parts .., the band phase 2 sums there)
     * instead of DRAM (0: all in DRAM) */
    int kb_parts, kb_phase;
    uint64_t kb_part, kb_sram;
    int compact;                  /* conv 1x1, pad 0, strided: tiles load only the rows and
                                   * columns it reads and run it at stride 1 (lower/conv.c) */
    uint64_t x, y, w, b;          /* tagged DRAM addresses (b: f32 bias or 0) */
    int w_oihw;                   /* conv: w is a run-time OIHW tensor, not the [kh][kw][cpg][OC] image */
    int vdw;                      /* conv: a depthwise conv (float, or int8 in lower/qmatrix.c) on
                                   * the vector unit, not the matrix unit's conv (lower/dwvec.c;
                                   * the input block and the weights with 64-byte pixel and tap
                                   * strides) */
    /* matmul: Y[bt][M][N] = A[bt][M][K] x B[bt][K][N] (+ bias[N] f32) */
    int bt, M, K, Nn, mt, nt, nmc, nnc;
    int kt;                       /* K chunk depth (the count is nkc above; nkc > 1: K split) */
    int a_res;                    /* matmul: A whole resident at l_wres (the multicast prologue), not B */
    int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs; /* element strides of A, B (batch, row, col) */
    uint64_t cx;                  /* Gemm's non-constant C (tagged, storage dtype), 0 none */
    int64_t c_rs, c_cs;           /* C's element strides as [M][N] (0 = broadcast) */
    float c_beta, mm_alpha;       /* beta on that C; alpha on A x B when B is not a constant */
    /* elementwise / reduce / softmax: 4-D output box tiling */
    uint32_t od[4];               /* output dims (collapsed) */
    uint32_t chunk[4], nch[4];    /* tile extents and counts per dim */
    int nin;
    uint64_t in_addr[BK_MAXIN];
    int64_t in_str[BK_MAXIN][4];  /* element strides in DRAM, 0 = broadcast */
    int nsteps, nregs, out_reg;
    BkStep steps[BK_MAXSTEP];
    int8_t reg_dt[BK_MAXIN + BK_MAXSTEP]; /* elementwise: each register's dtype (bk_step_dtypes) */
    float eps;                    /* layernorm epsilon */
    uint64_t y_mean, y_istd;      /* layernorm Mean / InvStdDev outputs (tagged DRAM), 0 = absent */
    uint32_t red_len;             /* reduce/softmax: length of the reduced axis */
    int red_shard, red_ci;        /* a reduction over whole planes of an input in channel
                                   * shards (BkBand.shard; 0: none) of red_ci channels an
                                   * image: tile t reads the planes of the shard its
                                   * cluster keeps (lower/vec.c, shard_chunk) */
    /* act epilogue (conv, mm) */
    char act[16];
    float act_alpha, act_beta;
    /* residual tail (conv): + the same box of tensor t_x (tagged DRAM,
     * storage dtype) after the activation, then the Add's own activation */
    uint64_t t_x;
    char t_act[16];
    float t_alpha, t_beta;
    uint64_t l_res, l_resf;       /* the residual block in the storage dtype; in f32 (when that differs) */
    /* LMEM layout inside a slot */
    uint64_t l_in, l_w, l_acc, l_b, l_out, l_tmp, l_reg[BK_MAXIN + BK_MAXSTEP];
    uint64_t l_c;                 /* matmul: a non-constant C block in a non-f32 storage dtype */
    uint64_t l_wres, l_bres;      /* resident (multicast) weights and bias, absolute LMEM */
    uint64_t l_dwx, l_dww;        /* vdw in bf16 / f16: the padded input block and the weights in
                                   * the storage dtype, cast to f32 at l_in / l_w (0 in f32) */
    int32_t *aux;                 /* per-kind table (malloc'd, freed with the layer): resize bands */
    uint64_t l_accres, acc_bytes; /* K split: two resident f32 accumulators, absolute LMEM, and one's size */
    /* quantised ops (lower/quant.c) */
    int q_bdt;                    /* storage dtype of B (A's is xdt) */
    int q_lo, q_hi;               /* clamp of a quantising tail (the output type's range) */
    int q_tail;                   /* 1 = ends in the quantising tail (QuantizeLinear, QLinearMatMul) */
    float q_mult, q_zp;           /* the f32 requantisation multiplier and output zero point */
    uint64_t q_za, q_zb, q_kzb;   /* tagged i32 vectors: A's zero point per row, B's (or the conv
                                   * weights') per column, K x B's */
    int q_xz;                     /* integer conv: x's zero point shifted into i8 (the pad value) */
    uint64_t q_ones, q_bias, q_mults; /* integer conv: i8 ones (the window-sum weights), i32 bias
                                   * (0 none), f32 multipliers per output channel (QLinearConv) */
    uint64_t q_yscale, q_yzp;     /* DynamicQuantizeLinear: its scale and zero-point outputs (tagged, 0 absent) */
    int q_sdt, q_zdt;             /* Quantize/DequantizeLinear: ISA dtypes of the scale / zero-point vectors
                                   * at w / b (f32 when compiled in; run-time ones: their storage dtypes) */
    int q_mode;                   /* int8 matrix layers (lower/qmatrix.c): i32 out, f32 or integer requantisation */
    int q_mm;                     /* int8 matrix layers: x is a matmul's A [rows][K], y [rows][N] */
} BkLow;

/* A strided copy of up to IR_MAXDIM dims (element strides, elements of
 * ISA dtype dt), DRAM to DRAM, or a fill when fill = 1 (src unused, value =
 * bit pattern). */
typedef struct BkCopy {
    int rank, dt;
    int64_t shape[IR_MAXDIM], dst_str[IR_MAXDIM], src_str[IR_MAXDIM];
    uint64_t dst, src;
    int fill;
    int32_t value;
} BkCopy;

/* The tile shapes a lowering leaves open: n opaque shapes of `size` bytes
 * at v, in the order to price them, tiles[i] the tile count of shape i.
 * apply() turns the layer into the complete plan of a shape (tiles, slot
 * layout, weight keys, split). group/search.c prices them on the layer's
 * core set and applies the cheapest: it stops once at least min_priced
 * shapes were priced and the tiles priced exceed tile_budget (0: prices
 * all). n = 0: the lowering applied its one plan itself. */
typedef struct BkShapes {
    void *v;
    size_t size;
    int n, cap;
    int64_t *tiles;
    int min_priced;
    int64_t tile_budget;
    int (*apply)(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e);
} BkShapes;

/* BkLayer.bands: how a layer's tiles go to the clusters */
enum { BK_BANDS_SPREAD, BK_BANDS_ROWS, BK_BANDS_CHANNELS, BK_BANDS_WAYS };

/* One shape the tile search priced (BkLayer.look): its way (BK_BANDS_*),
 * its rank in the way's (0: the cheapest, or the pick), a malloc'd copy of the shape (NULL: the layer has no shapes), its price
 * and the DMA room it leaves the next layer's prefetch. */
typedef struct BkLookOpt { int way, rank; void *shape; uint64_t price, room; } BkLookOpt;
enum { BK_LOOK_PER_WAY = 1, BK_LOOK_OPTS = BK_BANDS_WAYS * BK_LOOK_PER_WAY };

struct BkLayer {
    int node;                     /* IR node; -1 for a constant graph output */
    int tensor;                   /* node -1: the constant graph output this layer writes */
    int layer_id;                 /* the `layer` tag of its instructions */
    int ntiles;
    int tile_run;                 /* tiles [k*run, (k+1)*run) run on one core, in order
                                   * (K chunks of one output tile; run = ntiles: all on one core) */
    int *tile_wkey;               /* weight key of each tile, -1 none (malloc'd) */
    uint64_t slot_off, slot_size; /* LMEM of the two slots: slot b at slot_off + b * slot_size;
                                   * [0, slot_off) is resident for the whole layer (alloc/lmem.c) */
    int direct;                   /* DMA-only layer: its tiles are copies, no slots, no pipeline */
    BkTileGen gen;
    BkLow lw;
    char split[32];               /* how the output was sliced, e.g. "N1 C2 H4" */
    uint64_t macs;                /* useful multiply-accumulates */
    uint64_t run_macs;            /* executed (halo rows recomputed by a group); 0: macs */
    int is_matrix;
    /* weight multicast: the layer's whole weights live in the resident
     * region of every core of a cluster that runs its tiles, written once
     * per cluster by the DMA the prologue generates (its `st` list) */
    int mcast;
    /* input in SRAM: the layer's input is copied once per cluster from
     * DRAM into the cluster's SRAM (at address 0) by the prologue, and
     * every tile loads its input from there; the schedule's WAIT then holds
     * the DMA queue (the loads), not the matrix stream. The prologue's last
     * DMA is a multicast (the weights', or a 64-byte flag into l_flag) so
     * that its signal reaches every core of the cluster */
    int in_sram;
    /* weights staged in SRAM (conv, per-tile weight mode; docs/backend.md
     * "Weights in cluster SRAM"): in each cluster, the lowest core that
     * runs tiles of output-channel chunk key / tile_run copies each weight
     * key's block from DRAM into the cluster's SRAM before its own first
     * load of it (`stage`; chunk g's block at wsram_base + (g mod
     * wsram_slots) x wsram_chunk, as [kh*kw][C][chunk width]) and, with
     * BK_STAGE_FLAG, ends with a 64-byte multicast into l_flag whose signal
     * (BK_SEM_WEIGHTS) tells the chunk's other cores; tiles load their
     * weights from there */
    int wsram, wsram_slots;
    uint64_t wsram_base, wsram_chunk;
    /* the lowest wsram_base may take: BkCtx.sram_stage, or above the
     * staged input when in_sram too (the prefetch moves the base, never
     * below it) */
    uint64_t wsram_floor;
    int (*stage)(BkCtx *c, const BkLayer *ly, int tile, int mode, BkCode *code, AtlErr *e);   /* mode: BK_STAGE_* bits */
    /* 0 when the plan cannot run with the tiles on these cores (weights
     * staged in SRAM: a cluster's chunks collide in the slots); NULL: any */
    int (*cores_ok)(const BkCtx *c, const BkLayer *ly, const int *tile_core);
    uint64_t l_flag;              /* resident LMEM the flag lands in (in_sram or wsram without mcast) */
    uint64_t l_iflag;             /* the staged input's flags' word: l_flag, or the next word when wsram too */
    /* SRAM [wsram_lo, wsram_hi) the prologue fills with weights its
     * tiles then load (a layer group's streamed weights staged once per
     * cluster, lower/chain.c; 0 0 none): the prologue's WAIT then holds
     * the DMA stream, and no prefetch may write there (schedule/prefetch.c) */
    uint64_t wsram_lo, wsram_hi;
    int (*prologue)(BkCtx *c, const BkLayer *ly, BkCode *code, AtlErr *e);
    BkCopy *copies;               /* DMA-only layers: the strided copies (malloc'd) */
    int ncopies;
    BkShapes shapes;              /* candidate tile shapes (malloc'd), see BkShapes */
    struct BkChain *chain;        /* a layer group's plan (lower/chain.c; one malloc'd block) */
    /* bands (BkCtx.bands): band_cores, the chip's cores (0: off); on a
     * segment of them a conv/pool layer's tiles with bands = BK_BANDS_ROWS
     * go to the clusters by output rows, a conv's with BK_BANDS_CHANNELS
     * by output-channel chunks (schedule/bands.c); band_rows, the rows of
     * its banded output's window in each cluster's SRAM (0: not banded);
     * band_chans, BkCtx.band_chans */
    int bands, band_cores, band_clusters, band_rows, band_chans;
    /* bands: the staged input's gather in one piece even where its K
     * chunks could go one by one (bk_band_gather_pieces), when the cost
     * model prices that lower (set by bk_cost_segment, cost/cost.c) */
    int gather_whole;
    /* bands, the band way over the chain (backend/compile.c, look_resolve):
     * the cheapest BK_LOOK_PER_WAY shapes of each way the tile search
     * priced while BkCtx.band_look asked, the pick first (look[0]) */
    BkLookOpt look[BK_LOOK_OPTS];
    int nlook, look_cur;          /* the options, the one applied */
    int look_pf_layer;            /* BkCtx.pf_layer and pf_room before its search */
    uint64_t look_pf_room;
    int (*look_apply)(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e);
};

/* BkLayer.stage's mode: the block's copy DRAM -> SRAM, the flag after it
 * (both: as staged in its own segment; the copy alone: a prefetch by the
 * segment before; the flag alone: the key's copy was prefetched). */
enum { BK_STAGE_COPY = 1, BK_STAGE_FLAG = 2 };

/* layer.c: the layer's tiles: ntiles, run (see tile_run) and weight keys
 * all -1 (allocates tile_wkey); -1 unless run divides ntiles. */
int bk_set_tiles(BkLayer *ly, int ntiles, int run, AtlErr *e);
/* Appends a copy to a DMA-only layer's list (*cap: its capacity). */
int bk_push_copy(BkLayer *ly, int *cap, const BkCopy *cp);
/* Appends a candidate shape (size bytes, tiles tiles) to ly->shapes. */
int bk_push_shape(BkLayer *ly, const void *shape, size_t size, int64_t tiles, AtlErr *e);
/* Frees what the layer owns. */
void bk_layer_free(BkLayer *ly);

/* code.c: tile code lists and instruction builders. */
int bk_code_ld(BkCode *c, const AtlInsn *in, int weight);
int bk_code_cp(BkCode *c, const AtlInsn *in);
int bk_code_st(BkCode *c, const AtlInsn *in);
void bk_code_reset(BkCode *c);
void bk_code_free(BkCode *c);
/* One of c's lists (*list: *n instructions, capacity *cap; w NULL, or
 * its flags, at least *cap of them) becomes v (nv instructions, capacity
 * capv; vw: at least capv flags, taken as *w when w is not NULL). The
 * list's old buffers (and vw when w is NULL) become c's spare buffers,
 * which must be v and vw's or free: take them first with bk_code_spare. */
void bk_code_swap(BkCode *c, AtlInsn **list, int *n, int *cap, uint8_t **w, AtlInsn *v, uint8_t *vw, int nv, int capv,
                  int capvw);
/* Takes c's spare buffers (grown to at least n instructions, and n flags
 * when flags: -1 out of memory, they stay c's): *v and *vw with their
 * capacities; the caller gives them back (bk_code_swap, bk_code_unspare). */
int bk_code_spare(BkCode *c, int n, int flags, AtlInsn **v, uint8_t **vw, int *capv, int *capvw);
void bk_code_unspare(BkCode *c, AtlInsn *v, uint8_t *vw, int capv, int capvw);
/* Activations in every cluster's SRAM (placement chip, BkCtx.sram_copies
 * > 1): after each DMA of c that writes its own cluster's SRAM (cluster
 * `own` of `clusters`), a copy of what it wrote into every other cluster's
 * (peer@k:, over the NoC's cluster links) from the same source, or from
 * the own SRAM when the source is DRAM or the DMA is not a copy (a fill, a
 * gather or scatter: the rows it may write). A load keeps its weight flag.
 * The copies signal nothing (the list's last instruction may carry the
 * emitter's signal: a peer copy's with mask 0 reaches the issuing core). */
int bk_code_replicate_sram(BkCode *c, int clusters, int own);
AtlInsn bk_dma(int dt, int dsp, uint64_t dst, int ssp, uint64_t src, const uint32_t sh[4],
               const int64_t ds[4], const int64_t ss[4]);
AtlInsn bk_vun(int op, int dt, uint64_t dst, uint64_t src, const uint32_t sh[4],
               const int64_t ds[4], const int64_t ss[4], float alpha, float beta);
AtlInsn bk_vbin(int op, int dt, uint64_t dst, uint64_t a, uint64_t b, const uint32_t sh[4],
                const int64_t ds[4], const int64_t sa[4], const int64_t sb[4]);
void bk_compact(const uint32_t sh[4], int64_t st[4]); /* row-major element strides */
/* Appends the activation `act` on n contiguous elements at lmem p (in place). */
int bk_act_code(BkCode *c, const char *act, float alpha, float beta, int dt, uint64_t p,
                uint64_t tmp, uint32_t n, int layer);
/* A contiguous copy of n elements of dtype dt from tagged DRAM src to LMEM
 * dst, as one or two DMAs appended to the code's `st` list (prologues). */
int bk_flat_copy(BkCode *c, int dt, uint64_t dst, uint64_t src, uint64_t n);
/* The f32 epilogue of a conv/mm tile after its bias: l's fused activation
 * in place on the block osh (row-major strides ost) at acc (scratch tmp),
 * then with a residual tail (resid: the same block of the residual in f32,
 * 0 none) its add and l->t_act, then, when the storage dtype dt is not
 * f32, a cast into out. *res gets the LMEM of the result in dt. -1 when an
 * activation cannot be fused. */
int bk_matrix_epilogue(BkCode *c, const BkLow *l, int dt, uint64_t acc, uint64_t tmp, uint64_t out, uint64_t resid,
                       const uint32_t osh[4], const int64_t ost[4], uint64_t *res);
#endif

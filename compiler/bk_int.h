/* bk_int.h - the backend's internal data structures, shared by its passes
 * (see compiler/backend.h for the file list).
 *
 * The central one is the group schedule (BkGroup): one or more layers (v1:
 * exactly one IR node), the tiles its output is sliced into (how: `split`),
 * which core runs each tile, the LMEM bytes one tile needs (a "slot"), and a
 * generator that writes one tile's loads, computes and stores for a given
 * slot base. The pipeline emitter (bk_emit.c) turns the tiles of each core
 * into the 3-stage time-step table (load i+1 | compute i | store i-1) with
 * two slots (double buffering); the cost model (bk_cost.c) prices the same
 * table. Layer grouping (future) will build groups of several layers whose
 * generator keeps intermediates in LMEM; nothing else has to change.
 */
#ifndef ATOLL_COMPILER_BK_INT_H
#define ATOLL_COMPILER_BK_INT_H
#include <stdint.h>
#include "compiler/backend.h"
#include "isa/isa.h"

/* Semaphores used by the pipeline emitter, per slot b (0/1). */
enum {
    BK_SEM_LOADED = 0,   /* +b: the tile's loads have landed */
    BK_SEM_COMPUTED = 2, /* +b: the tile's computes are done */
    BK_SEM_TO_MAT = 4,   /* +b: hand-over inside a tile, vec -> mat */
    BK_SEM_TO_VEC = 6,   /* +b: hand-over inside a tile, mat -> vec */
    BK_SEM_WEIGHTS = 8,  /* the multicast resident weights have landed */
    BK_SEMS_USED = 9
};

/* Instructions of one tile. ld_w[i] marks a load of weights that may be
 * skipped when the same slot already holds them (same weight key). */
typedef struct BkCode {
    AtlInsn *ld, *cp, *st;
    uint8_t *ld_w;
    int nld, ncp, nst, capld, capcp, capst;
    int oom;
} BkCode;

typedef struct BkCtx BkCtx;
typedef struct BkGroup BkGroup;
typedef int (*BkTileGen)(BkCtx *c, const BkGroup *g, int tile, uint64_t slot, BkCode *code, AtlErr *e);

#define BK_MAXIN 4
#define BK_MAXSTEP 168   /* integer Pow: 5 steps per exponent bit (bk_elem_prog.c) */

/* An elementwise step on registers: reg < nin are the loaded inputs, the
 * others scratch; reg `out` is stored. */
typedef struct BkStep { int op; int dst, a, b; float alpha, beta; } BkStep;

/* Registers of a reduction / softmax tile (bk_lower_vec.c; its program is
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
    BK_K_SCATTER_EL, BK_K_SCATTER_ND, BK_K_REVSEQ
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
    uint64_t x, y, w, b;          /* tagged DRAM addresses (b: f32 bias or 0) */
    int w_oihw;                   /* conv: w is a run-time OIHW tensor, not the [kh][kw][cpg][OC] image */
    /* matmul: Y[bt][M][N] = A[bt][M][K] x B[bt][K][N] (+ bias[N] f32) */
    int bt, M, K, Nn, mt, nt, nmc, nnc;
    int kt;                       /* K chunk depth (the count is nkc above; nkc > 1: K split) */
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
    /* act epilogue (conv, mm) */
    char act[16];
    float act_alpha, act_beta;
    /* LMEM layout inside a slot */
    uint64_t l_in, l_w, l_acc, l_b, l_out, l_tmp, l_reg[BK_MAXIN + BK_MAXSTEP];
    uint64_t l_c;                 /* matmul: a non-constant C block in a non-f32 storage dtype */
    uint64_t l_wres, l_bres;      /* resident (multicast) weights and bias, absolute LMEM */
    int32_t *aux;                 /* per-kind table (malloc'd, freed with the group): resize bands */
    uint64_t l_accres, acc_bytes; /* K split: two resident f32 accumulators, absolute LMEM, and one's size */
    /* quantised ops (bk_lower_quant.c) */
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
} BkLow;

struct BkGroup {
    int node;                     /* IR node of the (single) layer; -1 for a constant output */
    int tensor;                   /* node -1: the constant graph output this layer writes */
    int layer_id;
    int ntiles;
    int *tile_core;               /* core of each tile (malloc'd) */
    int *tile_wkey;               /* weight key of each tile, -1 none (malloc'd) */
    uint64_t slot_off, slot_size; /* LMEM of the two slots: slot b at slot_off + b * slot_size;
                                   * [0, slot_off) is group-resident (bk_resident.c) */
    int direct;                   /* DMA-only layer: no pipeline, no slots */
    BkTileGen gen;
    BkLow lw;
    char split[32];
    uint64_t macs;
    int is_matrix;
    /* cost model results */
    uint64_t est_cycles, est_compute, est_dma;
    int cores_used;
    /* weight multicast: the layer's whole weights live in a resident LMEM
     * region [0, slot_off) of every core of a cluster that runs its tiles,
     * written once per cluster by one multicast DMA (prologue) */
    int mcast;
    int (*prologue)(BkCtx *c, const BkGroup *g, BkCode *code, AtlErr *e);
    struct BkCopy *copies;        /* DMA-only layers: the strided copies (malloc'd) */
    int ncopies;
};

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

/* Where a tensor lives. */
typedef struct BkPlace {
    int root;                     /* tensor whose storage it shares (itself if none) */
    int region;                   /* ABM_REGION_*, -1 not placed */
    uint64_t offset;              /* inside the region (for views: root's) */
    int placed;
} BkPlace;

struct BkCtx {
    const IrGraph *g;
    const AtlChip *chip;
    AbmWriter *w;
    int dt;                       /* storage dtype (ISA_F32/F16/BF16) */
    int es;                       /* its size in bytes */
    int ncores;
    int keep_activations;         /* BkOptions.keep_activations */
    uint64_t slot;                /* LMEM bytes of one slot */
    uint64_t align;               /* LMEM operand alignment */
    BkPlace *pl;                  /* per tensor */
    int *skip;                    /* per node: 1 = absorbed into another layer */
    int *gelu_src;                /* per node: Gelu pattern input tensor, -1 none */
    int *act_on;                  /* per node: 1 = apply IrNode.act in the epilogue */
    BkGroup *groups;
    int ngroups, capgroups;
    uint64_t weight_bytes, act_bytes, act_sum, io_bytes;
    AtlProgram prog;              /* per-core streams (DRAM operands tagged) */
};

/* bk_code.c */
int bk_code_ld(BkCode *c, const AtlInsn *in, int weight);
int bk_code_cp(BkCode *c, const AtlInsn *in);
int bk_code_st(BkCode *c, const AtlInsn *in);
void bk_code_reset(BkCode *c);
void bk_code_free(BkCode *c);
int bk_isa_dtype(int irdt);      /* IR dtype -> ISA dtype, -1 unsupported */
/* Storage dtype (ISA) of tensor t on the chip, the one mapping of
 * docs/backend.md "Data types": float tensors (f32, f16, bf16, f64) in the
 * backend's storage dtype BkCtx.dt; i8 -> i8; bool -> i8 (0/1); i16, u8 ->
 * i16; i32, i64, u16, u32 -> i32 (no 64-bit integers on the chip); -1 for
 * the others (u64, strings, complex). bk_tensor_es: its size in bytes. */
int bk_tensor_dt(const BkCtx *c, int t);
int bk_tensor_es(const BkCtx *c, int t);
int bk_is_int_dt(int isa_dt);    /* 1 for ISA_I8/I16/I32 */
uint32_t bk_abm_dtype(int isa_dt); /* the .abm tensor-table dtype of an ISA dtype */
uint64_t bk_addr(int region, uint64_t off);
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
/* The f32 epilogue of a conv/mm tile after its bias: l's fused activation
 * in place on the block osh (row-major strides ost) at acc (scratch tmp),
 * then, when the storage dtype dt is not f32, a cast into out. *res gets
 * the LMEM of the result in dt. -1 when the activation cannot be fused. */
int bk_matrix_epilogue(BkCode *c, const BkLow *l, int dt, uint64_t acc, uint64_t tmp, uint64_t out,
                       const uint32_t osh[4], const int64_t ost[4], uint64_t *res);
/* Adds a weight blob (data already in its final dtype and layout). */
int bk_weight(BkCtx *c, const void *data, size_t bytes, uint64_t *tagged, AtlErr *e);
/* A constant tensor in its storage dtype (bk_tensor_dt; integers as chip
 * integers, failing on a value outside their range), row-major (placed on
 * first use). */
int bk_const_addr(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e);
/* Stores constant `tensor` in the weights region in its storage dtype and
 * returns its tagged address, without making that its placement. */
int bk_const_image(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e);
/* Value v converted to dtype dt (float: rounded; integer: rounded half
 * even and saturated, as the chip converts) and stored as element i. */
void bk_store_elem(int dt, void *dst, size_t i, double v);

/* bk_place.c */
int bk_place(BkCtx *c, AtlErr *e);
uint64_t bk_tensor_addr(const BkCtx *c, int tensor); /* tagged, for placed non-constants */
int bk_tensor_in_dram(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e); /* constants too */

/* bk_limits.c: after placement, before lowering: no empty tensor but
 * constants, dimensions below 2^32, each tensor and the io + activation
 * regions within the chip's DRAM; the error names the tensor (and node). */
int bk_check_limits(const BkCtx *c, AtlErr *e);

/* bk_dtype.c: 0 when node's tensor dtypes are ones its lowering handles
 * (floats; integers for the ops listed there), else -1 naming the node. */
int bk_check_dtypes(const BkCtx *c, int node, AtlErr *e);
/* Cast, CastLike: a copy between equal storage dtypes, else one v.cast. */
int bk_lower_cast(BkCtx *c, int node, BkGroup *g, AtlErr *e);

/* bk_elem_prog.c: the table of elementwise register programs built from
 * the rounding, comparison, select, bitwise and transcendental vector ops.
 * bk_elem_program appends node nd's program to l (inputs are registers
 * 0..nin-1 with their dtypes in l->reg_dt, scratch from nin on), sets the
 * dtype of every register it writes, its output register and scratch
 * count: 1 done, 0 no table row for nd, -1 the program is too long.
 * bk_step_dtypes sets reg_dt of the dst of steps from..nsteps-1: a v.cast
 * gives cast_dt, v.sel its moved operand's dtype, other steps their a's. */
int bk_elem_has_program(const IrGraph *g, const IrNode *nd);
int bk_elem_program(const IrGraph *g, const IrNode *nd, BkLow *l, int nin, int *out, int *nscratch);
void bk_step_dtypes(BkLow *l, int from, int cast_dt);

/* bk_lower_*.c: fill a group for node n; each returns 0/-1 naming the node. */
int bk_lower_node(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_lower_conv(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_lower_pool(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_lower_mm(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_lower_mm.c: the batch counts of matmul operands A, B and result Y
 * (products of their dims before the last two) in bt[0..2]; -1 naming the
 * node unless A's and B's are each 1 or Y's. */
int bk_mm_batches(const BkCtx *c, int node, const IrTensor *a, const IrTensor *b, const IrTensor *y, int64_t bt[3],
                  AtlErr *e);
int bk_lower_elem(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_lower_reduce(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_lower_softmax(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_lower_layernorm(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_lower_move(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* Appends a copy to a DMA-only group's list (*cap: its capacity). */
int bk_push_copy(BkGroup *g, int *cap, const BkCopy *cp);
/* bk_lower_pad.c: the copies and fills of a Pad node (x at xa, y at ya). */
/* bk_lower_gather.c: Gather with run-time indices (dma.gather). */
int bk_lower_gather(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_lower_arg.c: ArgMax, ArgMin, Hardmax (v.rargmax / v.rargmin). */
int bk_lower_arg(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* Row tiling of a [1][outer][od2][od3] layer (lw.od set): runs of outer
 * rows, each per_row bytes of LMEM besides `fixed`, spread over the cores
 * (chunk[1] rows a tile); assigns the tiles. bk_row_range: tile t's first
 * row and *on = its row count. */
int bk_row_tiles(BkCtx *c, int node, BkGroup *g, int64_t outer, uint64_t per_row, uint64_t fixed, AtlErr *e);
uint32_t bk_row_range(const BkLow *l, int t, uint32_t *on);
/* bk_lower_loss.c: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss. */
int bk_lower_loss(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_lower_gather_el.c: GatherElements (flat indices on chip, dma.gather);
 * ScatterElements and Scatter (the same indices, dma.scatter). */
int bk_lower_gather_elements(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_lower_gather_nd.c: GatherND (row indices on chip, dma.gather);
 * ScatterND (the same rows, dma.scatter). */
int bk_lower_gather_nd(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* The DMA `op` (dma.gather / dma.scatter) of n rows of l->Nn elements (dt,
 * es; split as l->mt x l->nt), DRAM to DRAM, indexed by the i32 table at
 * LMEM idx, l->K rows along the indexed end. bk_row_slices: sets Nn, mt, nt
 * for rows of `slice` elements, or -1 naming the node. */
AtlInsn bk_row_index_dma(const BkLow *l, int op, uint64_t dst, uint64_t src, uint64_t idx, uint32_t n);
int bk_row_slices(BkCtx *c, int node, BkLow *l, int64_t slice, AtlErr *e);
/* bk_lower_revseq.c: ReverseSequence (source rows on chip, dma.gather). */
int bk_lower_revseq(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_scatter.c: shared by ScatterElements / Scatter (bk_lower_gather_el.c)
 * and ScatterND (bk_lower_gather_nd.c). bk_scatter_check: reduction "none"
 * and updates (input 2) in chip dtype dt, else -1 naming the node.
 * bk_scatter_tiles: all tiles on one core, in order. bk_scatter_copy_loads:
 * the flat DRAM copy of n elements x -> y as loads (first tile only). */
int bk_scatter_check(const BkCtx *c, int node, int dt, AtlErr *e);
int bk_scatter_tiles(BkCtx *c, BkGroup *g, int ntiles, AtlErr *e);
void bk_scatter_copy_loads(BkCode *k, int dt, uint64_t y, uint64_t x, uint64_t n);
/* bk_lower_onehot.c: OneHot (v.eq against constant tables, v.sel). */
int bk_lower_onehot(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_lower_topk.c: TopK by k rounds of v.rargmax / v.rargmin. */
int bk_lower_topk(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_lower_trilu.c: Trilu as a select by a constant mask. */
int bk_lower_trilu(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* 0 when tensor t's storage dtype is `want`, else -1 naming node, t and
 * both dtypes (the checks of the lowerings that mix dtypes). */
int bk_need_dt(const BkCtx *c, int node, int t, int want, AtlErr *e);
/* An i32 weight 0..n-1, with INT32_MIN at index `hole` (-1: none). */
int bk_iota_weight(BkCtx *c, int64_t n, int64_t hole, uint64_t *tagged, AtlErr *e);
/* bk_lower_resize.c: interpolating Resize on the matrix unit. */
int bk_lower_resize(BkCtx *c, int node, BkGroup *g, AtlErr *e);
/* bk_lower_vec.c: the 4-D box tiling of vector layers (BkLow od, chunk,
 * nch): tile t's origin and extents; chunks that fit `cap` bytes at
 * bytes_per_elem per box element, one tile per core when possible. */
void bk_box_of(const BkLow *l, int t, uint32_t o[4], uint32_t ext[4]);
int bk_fit_box(BkCtx *c, BkLow *l, uint64_t cap, uint64_t bytes_per_elem);
/* bk_lower_quant.c: QuantizeLinear, DequantizeLinear, MatMulInteger and
 * QLinearMatMul (bk_is_quant_op: 1 for those). */
int bk_is_quant_op(const char *op);
int bk_lower_quant(BkCtx *c, int node, BkGroup *g, AtlErr *e);
int bk_pad_copies(BkCtx *c, int node, BkGroup *g, int *cap, uint64_t xa, uint64_t ya, AtlErr *e);
/* bk_lower_layout.c: the copies of Tile, DepthToSpace, SpaceToDepth. */
int bk_layout_copies(BkCtx *c, int node, BkGroup *g, int *cap, uint64_t xa, uint64_t ya, AtlErr *e);
/* A graph output that constant folding made a constant: a copy from its
 * weights-region image into its io slot (nothing else writes it). */
int bk_lower_const_output(BkCtx *c, int tensor, BkGroup *g, AtlErr *e);
/* Marks nodes absorbed by patterns (fused activations, Gelu). */
int bk_match_patterns(BkCtx *c, AtlErr *e);

/* bk_rewrite_convt.c: ConvTranspose -> (Reshape, Pad, Reshape, [Pad],) Conv
 * on the backend's own copy of the graph; count = live nodes some
 * bk_rewrite_*.c replaces (ConvTranspose, RNN, GRU, LSTM). */
int bk_rewrite_count(const IrGraph *g);
int bk_rewrite_convtranspose(IrGraph *g, AtlErr *e);
/* bk_rewrite_rnn.c: RNN / GRU / LSTM unrolled into Gemm, element-wise ops
 * and views on the same copy; count = live RNN, GRU and LSTM nodes. */
int bk_rewrite_rnn_count(const IrGraph *g);
int bk_rewrite_rnn(IrGraph *g, AtlErr *e);

/* bk_rewrite_ops.c: ops the chip runs as other ops (variadic Sum/Mean/Max/
 * Min of more than BK_MAXIN inputs, InstanceNormalization, LRN, run-time
 * BatchNormalization incl. training mode, MeanVarianceNormalization, Reduce*
 * over non-adjacent axes, Einsum (bk_rewrite_einsum.c), Det (bk_rewrite_det.c),
 * and bk_rewrite_3d.c's 3-D Conv/pools and dilated MaxPool), rewritten on
 * the backend's own copy; count = nodes to rewrite. */
int bk_rewrite_ops_count(const IrGraph *g);
int bk_rewrite_ops(IrGraph *g, AtlErr *e);
/* bk_rewrite_3d.c: which nodes it rewrites, and the rewrite of one. */
int bk_rewrite_3d_applies(const IrGraph *g, int node);
int bk_rewrite_3d(IrGraph *g, int node, AtlErr *e);
/* bk_rewrite_einsum.c: Einsum of one or two inputs as Transpose / Reshape /
 * Gather / ReduceSum / MatMul. */
int bk_rewrite_einsum(IrGraph *g, int node, AtlErr *e);
/* bk_rewrite_det.c: Det of n x n matrices, n <= 3, by the explicit formula
 * (Gathers, Muls, ReduceSums); larger n fail naming the node and n. */
int bk_rewrite_det(IrGraph *g, int node, AtlErr *e);

/* bk_rewrite_int.c: BitShift(x, s) -> BitShift(x, 2^s) marked with the
 * attribute BK_SHIFT_BY_POW2 (applies: not yet marked). */
#define BK_SHIFT_BY_POW2 "atoll_shift_by_pow2"
int bk_rewrite_bitshift_applies(const IrGraph *g, int node);
int bk_rewrite_bitshift(IrGraph *g, int node, AtlErr *e);

/* bk_rewrite_pool_idx.c: MaxPool with its Indices output as the pool,
 * per-tap strided Slices, Equal and a Where chain (applies: Indices present). */
int bk_rewrite_pool_idx_applies(const IrGraph *g, int node);
int bk_rewrite_pool_idx(IrGraph *g, int node, AtlErr *e);

/* bk_rewrite_util.c: graph building for the rewrites. New tensors are
 * named "<base>#<what>"; each returns the new tensor (or node) or -1. */
int bk_rw_tensor(IrGraph *g, const char *base, const char *what, AtlErr *e);
int bk_rw_int_const(IrGraph *g, const char *base, const char *what, const int64_t *v, int n, AtlErr *e);
/* A constant of IR dtype `dtype` (v: its raw elements; NULL: zeros). */
int bk_rw_typed_const(IrGraph *g, const char *base, const char *what, int dtype, int ndim, const int64_t *dims,
                      const void *v, AtlErr *e);
int bk_rw_float_const(IrGraph *g, const char *base, const char *what, int ndim, const int64_t *dims, const float *v,
                      AtlErr *e);
/* Node op(ins) -> out (returns the node). */
int bk_rw_node(IrGraph *g, const char *op, const char *name, const int *ins, int nin, int out, AtlErr *e);
/* Node op(ins) -> a new tensor <base>#<what> (returns the tensor). */
int bk_rw_op(IrGraph *g, const char *op, const char *base, const char *what, const int *ins, int nin, AtlErr *e);
int bk_rw_reshape(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, AtlErr *e);
/* The same, writing tensor `out` (-1: a new one). */
int bk_rw_reshape_to(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, int out, AtlErr *e);
/* x seen as dims: a reshaped copy of a constant, else a Reshape node. */
int bk_rw_view(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, AtlErr *e);
/* Constant Pad of x (rank r) by pads (2 r values) with `value`. */
int bk_rw_pad(IrGraph *g, const char *base, const char *what, int x, const int64_t *pads, int r, float value, AtlErr *e);
/* x[..., i, ...] along axis (the axis dropped): Gather by a scalar constant. */
int bk_rw_index(IrGraph *g, const char *base, const char *what, int x, int axis, int64_t i, AtlErr *e);
/* op (Sum / Max / Min) of n tensors as a chain of nodes of at most
 * BK_MAXIN inputs; the last writes `out` (-1: a new tensor; one input
 * is then returned as it is). */
int bk_rw_fold(IrGraph *g, const char *op, const char *base, const char *what, const int *ins, int n, int out, AtlErr *e);
/* Slice of x on n axes, [starts, ends) each, step 1 (before opset 10,
 * where Slice takes attributes the chip does not lower: Gathers). */
int bk_rw_slice(IrGraph *g, const char *base, const char *what, int x, int n, const int64_t *axes, const int64_t *starts,
                const int64_t *ends, AtlErr *e);
/* Integer list attribute of cnt values (dflt when absent); -1 wrong length. */
int bk_rw_attr_ints(const IrNode *n, const char *name, int64_t *v, int cnt, int64_t dflt);
/* Transpose of x (rank r) by perm, into out (or a new tensor if out < 0). */
int bk_rw_transpose(IrGraph *g, const char *base, const char *what, int x, const int64_t *perm, int r, int out, AtlErr *e);
/* Reduce op (ReduceSum, ReduceMean, ...) of x over axes, its axes an
 * attribute or an input as the opset wants, into out (or a new tensor). */
int bk_rw_reduce(IrGraph *g, const char *op, const char *base, const char *what, int x, const int64_t *axes, int na,
                 int keepdims, int out, AtlErr *e);

/* bk_tile.c */
/* Slot allocator: returns the offset of a new buffer of `bytes`, aligned to
 * the LMEM alignment and bank width; *used is the running size. */
uint64_t bk_slot_alloc(const BkCtx *c, uint64_t *used, uint64_t bytes);
/* Assigns tiles to cores: contiguous blocks, balanced. Allocates arrays. */
int bk_assign_tiles(BkCtx *c, BkGroup *g, int ntiles, AtlErr *e);
/* The same, with tiles [k*run, (k+1)*run) always on one core, in order;
 * ntiles must be a multiple of run. */
int bk_assign_tile_runs(BkCtx *c, BkGroup *g, int ntiles, int run, AtlErr *e);
void bk_group_free(BkGroup *g);

/* bk_resident.c */
/* Rounds bytes up to the LMEM operand alignment. */
uint64_t bk_align_up(const BkCtx *c, uint64_t bytes);
/* Reserves `bytes` of group-resident LMEM below the slots and sets
 * g->slot_off/slot_size (0 bytes: the default slots); -1 if no slot room
 * is left. */
int bk_reserve_resident(const BkCtx *c, BkGroup *g, uint64_t bytes);

/* bk_cost.c */
/* Prices a group by generating its tiles and running the time-step table of
 * every core. Fills est_*. */
int bk_cost_group(BkCtx *c, BkGroup *g, AtlErr *e);
/* The same, but may stop once est_cycles is known to exceed `bound`
 * (UINT64_MAX: never): returns 1 then, with est_cycles = a lower bound
 * > bound and est_compute = est_dma = 0; returns 0 with the exact est_*
 * of bk_cost_group otherwise, -1 on error. A tile search that keeps a
 * candidate only when est_cycles < best can pass bound = best and skip
 * the candidate on 1: the choice is the same, found sooner. */
int bk_cost_group_bounded(BkCtx *c, BkGroup *g, uint64_t bound, AtlErr *e);
uint64_t bk_insn_cycles(const AtlChip *chip, const AtlInsn *in);

/* bk_flow.c: the work one DMA puts on each server of the cost model's
 * processor-sharing replay. Servers: DRAM channels [0, channels), NoC link
 * in per cluster, NoC link out per cluster, DMA port per core. */
typedef struct BkFlowPlanner BkFlowPlanner;
typedef struct BkFlowUse { int server; uint64_t work; } BkFlowUse;
/* use[0..nuse): servers with work (cycles of exclusive service); valid
 * until the next bk_flow_plan call. lat: latency + issue after the flow. */
typedef struct BkFlowPlan { const BkFlowUse *use; int nuse; uint64_t lat; } BkFlowPlan;
enum { BK_FLOW_MEMO = 0, BK_FLOW_WALK = 1, BK_FLOW_REFERENCE = 2 }; /* how: all give the same plan */
BkFlowPlanner *bk_flow_new(const AtlChip *chip, AtlErr *e);
void bk_flow_free(BkFlowPlanner *p);
int bk_flow_servers(const BkFlowPlanner *p);
/* Plans DMA `in` (DMA_COPY, DMA_FILL, DMA_GATHER or DMA_SCATTER, the last
 * two as the copy from/into rows 0..shape[1]-1 plus the index read) issued
 * by core `core`. */
int bk_flow_plan(BkFlowPlanner *p, int core, const AtlInsn *in, int how, BkFlowPlan *out, AtlErr *e);
void bk_flow_stats(const BkFlowPlanner *p, uint64_t *hits, uint64_t *misses);

/* bk_emit.c */
int bk_emit_group(BkCtx *c, BkGroup *g, AtlErr *e);
int bk_emit_finish(BkCtx *c, AtlErr *e);
/* Bit i set when core i of the cluster runs a tile of g. */
uint32_t bk_cluster_mask(const BkCtx *c, const BkGroup *g, int cluster);
/* Index of the lowest set bit of m (m != 0). */
static inline int bk_lowest_bit(uint32_t m)
{
    int i = 0;
    while (!(m >> i & 1)) i++;
    return i;
}

/* Node failure message: "node 'NAME' (OP): ...". */
int bk_fail(const BkCtx *c, int node, AtlErr *e, const char *fmt, ...) ATL_PRINTF(4, 5);
#endif

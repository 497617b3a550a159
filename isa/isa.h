/* isa.h - the Atoll instruction set, defined once.
 *
 * Everything about instructions comes from the two tables below:
 *   ISA_FIELDS   the catalogue of operand fields: assembler name, kind, and
 *                the AtlInsn member that holds the decoded value;
 *   ISA_OPS      every opcode: mnemonic, engine, format (which fields, in
 *                which order, how many bits each), and a one-line summary.
 * The encoder, decoder, assembler, disassembler, docs/isa.md generator and
 * the simulator's dispatch table are all loops over (or expansions of) these
 * tables; none of them lists opcodes by hand.
 *
 * Binary encoding: every instruction is ISA_INSN_BYTES (64) bytes, read as a
 * little-endian 512-bit string. Bits 0..39 are the common header
 * (op:8 wait:8 signal:8 layer:16); the op's format fields follow, packed in
 * table order from bit 40, each little-endian within the string; unused
 * high bits are zero (a decoder rejects non-zero padding). A DIMS/STRIDES
 * field is 4 elements of `bits` each, d0 (outermost) first; an ADDR field is
 * its offset (`bits`) followed by its 2-bit space code (isa/encode.c,
 * docs/isa.md).
 *
 * Conventions shared by every op:
 *   - shapes and strides are written outermost first, numpy style:
 *     shape=d0,d1,d2,d3 with d3 the innermost (fastest) dimension;
 *   - DMA strides are in BYTES; vector strides are in ELEMENTS of the
 *     operand's dtype; a stride of 0 broadcasts;
 *   - wait=S blocks the instruction until semaphore S of its core is > 0,
 *     then decrements it; signal=S increments semaphore S when the
 *     instruction completes (for a DMA into LMEM, on every destination core
 *     of the mask; into another cluster's SRAM, on the mask's cores of that
 *     cluster). Encoded as id+1, 0 meaning none.
 *   - layer=L tags the instruction for the per-layer report: below
 *     ISA_MEMBER_TAG a layer id, else member M of layer group G
 *     (isa_member_tag; docs/simulator.md, "per layer").
 */
#ifndef ATOLL_ISA_H
#define ATOLL_ISA_H
#include <stdint.h>
#include <stddef.h>
#include "util/err.h"

#define ISA_INSN_BYTES 64
#define ISA_HEADER_BITS 40
#define ISA_MAX_FORMAT_FIELDS 24
#define ISA_MAX_SEMAPHORES 32

/* Data types. Size in bytes via isa_dtype_size(). */
#define ISA_DTYPES(X) \
    X(I8,   "i8",   1) \
    X(I16,  "i16",  2) \
    X(I32,  "i32",  4) \
    X(F16,  "f16",  2) \
    X(BF16, "bf16", 2) \
    X(F32,  "f32",  4)
typedef enum {
#define X(id, name, size) ISA_##id,
    ISA_DTYPES(X)
#undef X
    ISA_NUM_DTYPES
} AtlDtype;

/* Memory spaces a DMA operand may name: X(ID, name, peer, doc). Matrix
 * and vector operands are always in the issuing core's LMEM. A space with
 * `peer` set is another cluster's memory, reached over the NoC's cluster
 * links: its 40-bit address holds the cluster in bits 32..39 and the byte
 * offset in bits 0..31 (isa_peer_addr), written `NAME@CLUSTER:OFFSET`. */
#define ISA_SPACES(X) \
    X(DRAM, "dram", 0, "device DRAM") \
    X(SRAM, "sram", 0, "the issuing core's cluster SRAM") \
    X(LMEM, "lmem", 0, "a core's LMEM (src_core / mask name the cores of the cluster)") \
    X(PEER, "peer", 1, "the SRAM of cluster CLUSTER, over the NoC's cluster links (chips with `[noc] cluster_links = 1`)")
typedef enum {
#define X(id, name, peer, doc) ISA_SPACE_##id,
    ISA_SPACES(X)
#undef X
    ISA_NUM_SPACES
} AtlSpace;

/* A peer operand's address: cluster in bits 32..39, byte offset below. */
#define ISA_PEER_SHIFT 32
#define ISA_PEER_MAX_CLUSTER 255
static inline uint64_t isa_peer_addr(int cluster, uint64_t offset)
{
    return (uint64_t)(unsigned)cluster << ISA_PEER_SHIFT | (offset & 0xffffffffu);
}
static inline int isa_peer_cluster(uint64_t addr) { return (int)(addr >> ISA_PEER_SHIFT); }
static inline uint64_t isa_peer_offset(uint64_t addr) { return addr & 0xffffffffu; }

/* Engines of a core. Each has its own in-order queue. */
#define ISA_ENGINES(X) \
    X(DMA, "dma") \
    X(MAT, "mat") \
    X(VEC, "vec")
typedef enum {
#define X(id, name) ISA_ENGINE_##id,
    ISA_ENGINES(X)
#undef X
    ISA_NUM_ENGINES
} AtlEngine;
#define ISA_ENGINE_ANY ISA_NUM_ENGINES /* sync ops run on any engine's queue */

/* Barrier scopes. */
enum { ISA_SCOPE_CLUSTER = 0, ISA_SCOPE_CHIP = 1 };

/* The decoded form of an instruction. Which members an op uses is given by
 * its format; the others are zero. */
typedef struct AtlInsn {
    uint8_t op;
    uint8_t wait, signal;      /* semaphore id + 1; 0 = none */
    uint16_t layer;
    uint8_t dtype, otype;      /* operand dtype, result dtype */
    uint8_t dst_space, src_space;
    uint8_t src2_space;        /* dma.gather/dma.scatter: space of the index table */
    uint8_t src_core;          /* DMA: which core's LMEM a lmem source is in (within the cluster) */
    uint32_t mask;             /* DMA: destination core mask for LMEM (0 = own core); a peer destination's cores to signal */
    uint64_t dst, src, src2, src3;                /* byte addresses within their space */
    uint32_t shape[4];
    int32_t dst_stride[4], src_stride[4], src2_stride[4];
    uint32_t m, k, n;          /* mm: C[m,n] (+)= A[m,k] x B[k,n] */
    uint32_t lda, ldb, ldc;    /* mm row strides in elements */
    uint32_t cin, ih, iw, cout;/* conv/pool input C,H,W and conv output channels */
    uint8_t kh, kw, sh, sw, dh, dw;
    uint8_t pad_top, pad_left, pad_bottom, pad_right;
    uint16_t groups;
    uint8_t acc;               /* mm/conv: accumulate into dst */
    uint8_t count_pad;         /* avgpool: divide by the full window incl. padding */
    uint8_t per_channel;       /* requant: one (mult, shift) per innermost index */
    uint8_t round_even;        /* requant: ties to even instead of away from zero */
    uint8_t axis;              /* reductions: 0..3 */
    uint8_t last;              /* v.rargmax/v.rargmin: ties (and NaNs) give the last index */
    uint8_t scope;             /* barriers */
    uint16_t bar_id, bar_count;
    uint32_t limit;            /* dma.gather: source rows, dma.scatter: destination rows along d1 (valid indices -limit..limit-1) */
    int32_t ival;              /* fill pattern bits / zero point / conv pad value */
    int32_t lo, hi;            /* requant clamp */
    float alpha, beta;         /* activation parameters (f32) */
} AtlInsn;

/* The layer field's member tags: ISA_MEMBER_TAG | G << 4 | M tags an
 * instruction of member M (0..15) of layer group G (0..2047); it counts
 * for layer G and for its member M. A value below ISA_MEMBER_TAG is a
 * plain layer id. */
#define ISA_MEMBER_TAG 0x8000u
#define ISA_MAX_MEMBERS 16
#define ISA_MAX_TAGGED_LAYER 2047
static inline uint16_t isa_member_tag(unsigned layer, unsigned member)
{
    return (uint16_t)(ISA_MEMBER_TAG | (layer << 4) | member);
}
/* The layer id a layer field counts for. */
static inline unsigned isa_tag_layer(unsigned tag) { return tag & ISA_MEMBER_TAG ? (tag & 0x7fffu) >> 4 : tag; }
/* The member a layer field tags, -1 for a plain layer id. */
static inline int isa_tag_member(unsigned tag) { return tag & ISA_MEMBER_TAG ? (int)(tag & 15u) : -1; }

/* Field kinds: how the assembler parses and the disassembler prints them. */
typedef enum {
    ISA_K_UINT,    /* unsigned integer */
    ISA_K_INT,     /* signed integer (two's complement in `bits`) */
    ISA_K_DTYPE,   /* i8 i16 i32 f16 bf16 f32 */
    ISA_K_ADDR,    /* space:offset, space stored in the member named by `space_member` */
    ISA_K_LMEM,    /* LMEM byte offset (the "lmem:" prefix is optional) */
    ISA_K_DIMS,    /* 4 unsigned, comma separated, outermost first */
    ISA_K_STRIDES, /* 4 signed, comma separated, outermost first */
    ISA_K_F32,     /* IEEE single, stored as its bit pattern */
    ISA_K_FLAG     /* 0 or 1 */
} AtlFieldKind;

/* ISA_FIELDS(F): F(ID, asm_name, kind, member, doc) */
#define ISA_FIELDS(F) \
    F(DTYPE,    "dtype",    ISA_K_DTYPE,   dtype,       "operand data type") \
    F(OTYPE,    "otype",    ISA_K_DTYPE,   otype,       "result data type") \
    F(DST,      "dst",      ISA_K_ADDR,    dst,         "destination (space:offset)") \
    F(SRC,      "src",      ISA_K_ADDR,    src,         "source (space:offset)") \
    F(LDST,     "dst",      ISA_K_LMEM,    dst,         "destination LMEM offset") \
    F(LSRC,     "src",      ISA_K_LMEM,    src,         "first source LMEM offset") \
    F(LSRC2,    "src2",     ISA_K_LMEM,    src2,        "second source LMEM offset") \
    F(LSRC3,    "src3",     ISA_K_LMEM,    src3,        "third source LMEM offset") \
    F(IDX,      "idx",      ISA_K_ADDR,    src2,        "index table (space:offset): one i32 per position along d1") \
    F(LIMIT,    "limit",    ISA_K_UINT,    limit,       "rows along d1 of the indexed end (dma.gather: src, dma.scatter: dst); an index i names row i (i >= 0) or i + limit (i < 0)") \
    F(SRC_CORE, "src_core", ISA_K_UINT,    src_core,    "core (in cluster) whose LMEM an lmem: source is in") \
    F(MASK,     "mask",     ISA_K_UINT,    mask,        "LMEM destination core mask, bit i = core i of the cluster; 0 = own core (a peer destination: the cores of its cluster that `signal` counts on)") \
    F(SHAPE,    "shape",    ISA_K_DIMS,    shape,       "4-D shape, outermost first") \
    F(DSTRIDE,  "dstride",  ISA_K_STRIDES, dst_stride,  "destination strides") \
    F(SSTRIDE,  "sstride",  ISA_K_STRIDES, src_stride,  "source strides") \
    F(S2STRIDE, "s2stride", ISA_K_STRIDES, src2_stride, "second source strides") \
    F(M,        "m",        ISA_K_UINT,    m,           "rows of A and C") \
    F(K,        "k",        ISA_K_UINT,    k,           "columns of A, rows of B") \
    F(N,        "n",        ISA_K_UINT,    n,           "columns of B and C") \
    F(LDA,      "lda",      ISA_K_UINT,    lda,         "row stride of A in elements") \
    F(LDB,      "ldb",      ISA_K_UINT,    ldb,         "row stride of B in elements") \
    F(LDC,      "ldc",      ISA_K_UINT,    ldc,         "row stride of C in elements") \
    F(CIN,      "c",        ISA_K_UINT,    cin,         "input channels") \
    F(IH,       "h",        ISA_K_UINT,    ih,          "input height") \
    F(IW,       "w",        ISA_K_UINT,    iw,          "input width") \
    F(COUT,     "oc",       ISA_K_UINT,    cout,        "output channels") \
    F(KH,       "kh",       ISA_K_UINT,    kh,          "kernel height") \
    F(KW,       "kw",       ISA_K_UINT,    kw,          "kernel width") \
    F(SH,       "sh",       ISA_K_UINT,    sh,          "stride along H") \
    F(SW,       "sw",       ISA_K_UINT,    sw,          "stride along W") \
    F(DH,       "dh",       ISA_K_UINT,    dh,          "dilation along H") \
    F(DW,       "dw",       ISA_K_UINT,    dw,          "dilation along W") \
    F(PT,       "pt",       ISA_K_UINT,    pad_top,     "padding above") \
    F(PL,       "pl",       ISA_K_UINT,    pad_left,    "padding left") \
    F(PB,       "pb",       ISA_K_UINT,    pad_bottom,  "padding below") \
    F(PR,       "pr",       ISA_K_UINT,    pad_right,   "padding right") \
    F(GROUPS,   "groups",   ISA_K_UINT,    groups,      "convolution groups (c = oc = groups: depthwise)") \
    F(ACC,      "acc",      ISA_K_FLAG,    acc,         "accumulate into dst instead of overwriting") \
    F(COUNTPAD, "countpad", ISA_K_FLAG,    count_pad,   "average over the whole window including padding") \
    F(PERCH,    "perch",    ISA_K_FLAG,    per_channel, "per-channel parameters along the innermost dimension") \
    F(EVEN,     "even",     ISA_K_FLAG,    round_even,  "requant: round ties to even (ONNX QuantizeLinear) instead of away from zero") \
    F(AXIS,     "axis",     ISA_K_UINT,    axis,        "dimension to reduce, 0 = outermost") \
    F(LAST,     "last",     ISA_K_FLAG,    last,        "arg-reductions: of equal extremes take the last index, not the first") \
    F(SCOPE,    "scope",    ISA_K_UINT,    scope,       "0 = cluster, 1 = chip") \
    F(BAR_ID,   "id",       ISA_K_UINT,    bar_id,      "barrier id") \
    F(BAR_CNT,  "count",    ISA_K_UINT,    bar_count,   "number of arrivals that release the barrier") \
    F(IVAL,     "value",    ISA_K_INT,     ival,        "integer immediate (fill bit pattern, zero point, pad value)") \
    F(LO,       "lo",       ISA_K_INT,     lo,          "lower clamp") \
    F(HI,       "hi",       ISA_K_INT,     hi,          "upper clamp") \
    F(ALPHA,    "alpha",    ISA_K_F32,     alpha,       "first f32 parameter") \
    F(BETA,     "beta",     ISA_K_F32,     beta,        "second f32 parameter")

typedef enum {
#define F(id, name, kind, member, doc) ISA_F_##id,
    ISA_FIELDS(F)
#undef F
    ISA_NUM_FIELDS
} AtlFieldId;

/* Formats: the ordered field list of a family of ops, with the encoded
 * width of each field (for DIMS/STRIDES: bits per element). A DMA address
 * takes 2 more bits for its space. FORMAT(ID, FIELD(id, bits)...) */
#define ISA_FORMATS(FMT, FLD) \
    FMT(DMA_COPY, FLD(DTYPE,3) FLD(DST,40) FLD(SRC,40) FLD(SRC_CORE,5) FLD(MASK,32) \
                  FLD(SHAPE,16) FLD(DSTRIDE,32) FLD(SSTRIDE,32)) \
    FMT(DMA_FILL, FLD(DTYPE,3) FLD(DST,40) FLD(MASK,32) FLD(SHAPE,16) FLD(DSTRIDE,32) FLD(IVAL,32)) \
    FMT(DMA_GATHER, FLD(DTYPE,3) FLD(DST,40) FLD(SRC,40) FLD(IDX,40) FLD(SHAPE,16) FLD(DSTRIDE,32) \
                  FLD(SSTRIDE,32) FLD(LIMIT,22)) \
    FMT(MM,       FLD(DTYPE,3) FLD(ACC,1) FLD(LDST,32) FLD(LSRC,32) FLD(LSRC2,32) \
                  FLD(M,16) FLD(K,16) FLD(N,16) FLD(LDA,16) FLD(LDB,16) FLD(LDC,16)) \
    FMT(CONV,     FLD(DTYPE,3) FLD(ACC,1) FLD(LDST,32) FLD(LSRC,32) FLD(LSRC2,32) \
                  FLD(CIN,16) FLD(IH,16) FLD(IW,16) FLD(COUT,16) FLD(KH,8) FLD(KW,8) \
                  FLD(SH,6) FLD(SW,6) FLD(DH,6) FLD(DW,6) FLD(PT,6) FLD(PL,6) FLD(PB,6) FLD(PR,6) \
                  FLD(GROUPS,16) FLD(IVAL,16)) \
    FMT(VBIN,     FLD(DTYPE,3) FLD(LDST,32) FLD(LSRC,32) FLD(LSRC2,32) FLD(SHAPE,16) \
                  FLD(DSTRIDE,24) FLD(SSTRIDE,24) FLD(S2STRIDE,24)) \
    FMT(VUN,      FLD(DTYPE,3) FLD(LDST,32) FLD(LSRC,32) FLD(SHAPE,16) FLD(DSTRIDE,24) \
                  FLD(SSTRIDE,24) FLD(ALPHA,32) FLD(BETA,32)) \
    FMT(VPOOL,    FLD(DTYPE,3) FLD(LDST,32) FLD(LSRC,32) FLD(CIN,16) FLD(IH,16) FLD(IW,16) \
                  FLD(KH,8) FLD(KW,8) FLD(SH,6) FLD(SW,6) FLD(PT,6) FLD(PL,6) FLD(PB,6) FLD(PR,6) \
                  FLD(COUNTPAD,1)) \
    FMT(VRED,     FLD(DTYPE,3) FLD(OTYPE,3) FLD(LDST,32) FLD(LSRC,32) FLD(SHAPE,16) FLD(AXIS,2)) \
    FMT(VREQ,     FLD(LDST,32) FLD(LSRC,32) FLD(LSRC2,32) FLD(SHAPE,16) FLD(PERCH,1) \
                  FLD(IVAL,8) FLD(LO,8) FLD(HI,8) FLD(EVEN,1)) \
    FMT(VCAST,    FLD(DTYPE,3) FLD(OTYPE,3) FLD(LDST,32) FLD(LSRC,32) FLD(SHAPE,16) \
                  FLD(DSTRIDE,24) FLD(SSTRIDE,24)) \
    FMT(BARRIER,  FLD(SCOPE,1) FLD(BAR_ID,8) FLD(BAR_CNT,16)) \
    FMT(NONE,     ) \
    FMT(VARG,     FLD(DTYPE,3) FLD(LDST,32) FLD(LSRC,32) FLD(SHAPE,16) FLD(AXIS,2) FLD(LAST,1))

/* ISA_OPS(X): X(ID, mnemonic, engine, format, summary)
 * Numeric semantics of every op: docs/isa.md (generated by `atoll isa` from
 * the summaries below and the prose in tools/cmd_isa.c) and isa/numerics.h
 * (docs/isa-numerics.md). */
#define ISA_OPS(X) \
    X(NOP,      "nop",      ISA_ENGINE_ANY, NONE,     "no operation; waits and signals like any instruction") \
    X(END,      "end",      ISA_ENGINE_ANY, NONE,     "end of this engine's stream; the core is done when all three have ended") \
    X(BARRIER,  "barrier",  ISA_ENGINE_ANY, BARRIER,  "block until `count` arrivals at barrier `id` in the scope, then release them all") \
    X(DMA_COPY, "dma.copy", ISA_ENGINE_DMA, DMA_COPY, "strided 4-D copy between DRAM, cluster SRAM and LMEM (or another cluster's SRAM over the NoC); multicast to LMEM by mask") \
    X(DMA_FILL, "dma.fill", ISA_ENGINE_DMA, DMA_FILL, "fill a strided 4-D region with a constant bit pattern of dtype's size") \
    X(MM,       "mm",       ISA_ENGINE_MAT, MM,       "C[m,n] (+)= A[m,k] x B[k,n]; i8->i32, f16/bf16->f32, f32->f32") \
    X(CONV,     "conv",     ISA_ENGINE_MAT, CONV,     "2-D convolution of one HWC image with [kh][kw][c/groups][oc] weights into HWC i32/f32") \
    X(V_ADD,    "v.add",    ISA_ENGINE_VEC, VBIN,     "dst = src + src2") \
    X(V_SUB,    "v.sub",    ISA_ENGINE_VEC, VBIN,     "dst = src - src2") \
    X(V_MUL,    "v.mul",    ISA_ENGINE_VEC, VBIN,     "dst = src * src2") \
    X(V_MAX,    "v.max",    ISA_ENGINE_VEC, VBIN,     "dst = max(src, src2)") \
    X(V_MIN,    "v.min",    ISA_ENGINE_VEC, VBIN,     "dst = min(src, src2)") \
    X(V_MOV,    "v.mov",    ISA_ENGINE_VEC, VUN,      "dst = src (strided copy inside LMEM)") \
    X(V_AFFINE, "v.affine", ISA_ENGINE_VEC, VUN,      "dst = src * alpha + beta") \
    X(V_RELU,   "v.relu",   ISA_ENGINE_VEC, VUN,      "dst = max(src, 0)") \
    X(V_LRELU,  "v.lrelu",  ISA_ENGINE_VEC, VUN,      "dst = src >= 0 ? src : alpha * src") \
    X(V_CLIP,   "v.clip",   ISA_ENGINE_VEC, VUN,      "dst = min(max(src, alpha), beta)") \
    X(V_SIGMOID,"v.sigmoid",ISA_ENGINE_VEC, VUN,      "dst = 1 / (1 + exp(-src))") \
    X(V_TANH,   "v.tanh",   ISA_ENGINE_VEC, VUN,      "dst = tanh(src)") \
    X(V_EXP,    "v.exp",    ISA_ENGINE_VEC, VUN,      "dst = exp(src)") \
    X(V_LOG,    "v.log",    ISA_ENGINE_VEC, VUN,      "dst = log(src)") \
    X(V_GELU,   "v.gelu",   ISA_ENGINE_VEC, VUN,      "dst = 0.5 * src * (1 + erf(src / sqrt(2)))") \
    X(V_RECIP,  "v.recip",  ISA_ENGINE_VEC, VUN,      "dst = 1 / src") \
    X(V_SQRT,   "v.sqrt",   ISA_ENGINE_VEC, VUN,      "dst = sqrt(src)") \
    X(V_RSQRT,  "v.rsqrt",  ISA_ENGINE_VEC, VUN,      "dst = 1 / sqrt(src)") \
    X(V_MAXPOOL,"v.maxpool",ISA_ENGINE_VEC, VPOOL,    "max pooling of one HWC image") \
    X(V_AVGPOOL,"v.avgpool",ISA_ENGINE_VEC, VPOOL,    "average pooling of one HWC image") \
    X(V_RSUM,   "v.rsum",   ISA_ENGINE_VEC, VRED,     "sum of a contiguous 4-D tensor along `axis`") \
    X(V_RMAX,   "v.rmax",   ISA_ENGINE_VEC, VRED,     "maximum of a contiguous 4-D tensor along `axis`") \
    X(V_REQUANT,"v.requant",ISA_ENGINE_VEC, VREQ,     "i32 -> i8: clamp(zp + round(x * mult / 2^(31+shift)), lo, hi), params (i32 mult, i32 shift) at src2; ties away from zero, or to even with `even`") \
    X(V_CAST,   "v.cast",   ISA_ENGINE_VEC, VCAST,    "convert dtype -> otype (round to nearest even, saturate)") \
    X(DMA_GATHER,"dma.gather",ISA_ENGINE_DMA, DMA_GATHER, "strided 4-D copy whose d1 source row is read from an i32 index table: dst[a,j,c,d] = src[a,idx[j],c,d]; an index outside [-limit, limit) faults") \
    X(V_EQ,     "v.eq",     ISA_ENGINE_VEC, VBIN,     "dst = src == src2 ? 1 : 0 (NaN compares false)") \
    X(V_LT,     "v.lt",     ISA_ENGINE_VEC, VBIN,     "dst = src < src2 ? 1 : 0") \
    X(V_LE,     "v.le",     ISA_ENGINE_VEC, VBIN,     "dst = src <= src2 ? 1 : 0") \
    X(V_SEL,    "v.sel",    ISA_ENGINE_VEC, VBIN,     "dst = src != 0 ? src2 : dst (conditional move; reads the old dst)") \
    X(V_AND,    "v.and",    ISA_ENGINE_VEC, VBIN,     "dst = src & src2 (integer dtypes only)") \
    X(V_OR,     "v.or",     ISA_ENGINE_VEC, VBIN,     "dst = src | src2 (integer dtypes only)") \
    X(V_XOR,    "v.xor",    ISA_ENGINE_VEC, VBIN,     "dst = src ^ src2 (integer dtypes only)") \
    X(V_DIV,    "v.div",    ISA_ENGINE_VEC, VBIN,     "dst = src / src2 (integers: toward zero, saturating; a zero divisor faults)") \
    X(V_MOD,    "v.mod",    ISA_ENGINE_VEC, VBIN,     "dst = src mod src2 (integers: sign of the divisor, a zero divisor faults; floats: fmodf)") \
    X(V_FLOOR,  "v.floor",  ISA_ENGINE_VEC, VUN,      "dst = floor(src)") \
    X(V_CEIL,   "v.ceil",   ISA_ENGINE_VEC, VUN,      "dst = ceil(src)") \
    X(V_ROUND,  "v.round",  ISA_ENGINE_VEC, VUN,      "dst = src rounded to the nearest integer, half to even") \
    X(V_TRUNC,  "v.trunc",  ISA_ENGINE_VEC, VUN,      "dst = src rounded toward zero") \
    X(V_SIGN,   "v.sign",   ISA_ENGINE_VEC, VUN,      "dst = -1, 0 or +1 by the sign of src (NaN stays NaN)") \
    X(V_SIN,    "v.sin",    ISA_ENGINE_VEC, VUN,      "dst = sin(src)") \
    X(V_COS,    "v.cos",    ISA_ENGINE_VEC, VUN,      "dst = cos(src)") \
    X(V_TAN,    "v.tan",    ISA_ENGINE_VEC, VUN,      "dst = tan(src)") \
    X(V_ASIN,   "v.asin",   ISA_ENGINE_VEC, VUN,      "dst = asin(src)") \
    X(V_ACOS,   "v.acos",   ISA_ENGINE_VEC, VUN,      "dst = acos(src)") \
    X(V_ATAN,   "v.atan",   ISA_ENGINE_VEC, VUN,      "dst = atan(src)") \
    X(V_SINH,   "v.sinh",   ISA_ENGINE_VEC, VUN,      "dst = sinh(src)") \
    X(V_COSH,   "v.cosh",   ISA_ENGINE_VEC, VUN,      "dst = cosh(src)") \
    X(V_ASINH,  "v.asinh",  ISA_ENGINE_VEC, VUN,      "dst = asinh(src)") \
    X(V_ACOSH,  "v.acosh",  ISA_ENGINE_VEC, VUN,      "dst = acosh(src)") \
    X(V_ATANH,  "v.atanh",  ISA_ENGINE_VEC, VUN,      "dst = atanh(src)") \
    X(V_ERF,    "v.erf",    ISA_ENGINE_VEC, VUN,      "dst = erf(src)") \
    X(V_RMIN,   "v.rmin",   ISA_ENGINE_VEC, VRED,     "minimum of a contiguous 4-D tensor along `axis`") \
    X(V_RARGMAX,"v.rargmax",ISA_ENGINE_VEC, VARG,     "i32 index along `axis` of the maximum of a contiguous 4-D tensor (first of ties, last if `last`; NaN is the maximum)") \
    X(V_RARGMIN,"v.rargmin",ISA_ENGINE_VEC, VARG,     "i32 index along `axis` of the minimum of a contiguous 4-D tensor (first of ties, last if `last`; NaN is the minimum)") \
    X(DMA_SCATTER,"dma.scatter",ISA_ENGINE_DMA, DMA_GATHER, "strided 4-D copy whose d1 destination row is read from an i32 index table: dst[a,idx[j],c,d] = src[a,j,c,d], rows in j order (a repeated index keeps the last); an index outside [-limit, limit) faults")

typedef enum {
#define X(id, mn, eng, fmt, doc) ISA_OP_##id,
    ISA_OPS(X)
#undef X
    ISA_NUM_OPS
} AtlOpcode;

typedef enum {
#define FMT(id, fields) ISA_FMT_##id,
#define FLD(f, b)
    ISA_FORMATS(FMT, FLD)
#undef FMT
#undef FLD
    ISA_NUM_FORMATS
} AtlFormat;

/* Table views, built from the macros above (isa/isa_table.c). */
typedef struct AtlFieldInfo {
    const char *name;
    AtlFieldKind kind;
    size_t offset;     /* offsetof(AtlInsn, member) */
    size_t size;       /* sizeof the member (array: whole array) */
    const char *doc;
} AtlFieldInfo;

typedef struct AtlFormatField {
    AtlFieldId field;
    uint8_t bits;      /* per element for DIMS/STRIDES; ADDR adds 2 space bits */
} AtlFormatField;

typedef struct AtlOpInfo {
    const char *mnemonic;
    int engine;        /* AtlEngine or ISA_ENGINE_ANY */
    AtlFormat format;
    const char *summary;
} AtlOpInfo;

typedef struct AtlFormatInfo {
    const char *name;
    int nfields;
    AtlFormatField fields[ISA_MAX_FORMAT_FIELDS];
} AtlFormatInfo;

extern const AtlFieldInfo isa_fields[ISA_NUM_FIELDS];
extern const AtlOpInfo isa_ops[ISA_NUM_OPS];
extern const AtlFormatInfo isa_formats[ISA_NUM_FORMATS];

const char *isa_dtype_name(int dtype);     /* "?" if out of range */
int isa_dtype_size(int dtype);             /* 0 if out of range */
uint64_t isa_shape_bytes(const AtlInsn *in);   /* shape[0..3] elements x the dtype's size: a dma.copy's bytes */
int isa_dtype_from_name(const char *s);    /* -1 if unknown */
const char *isa_space_name(int space);
int isa_space_is_peer(int space);          /* 1: the address carries a cluster (isa_peer_addr) */
const char *isa_space_doc(int space);
const char *isa_engine_name(int engine);   /* "any" for ISA_ENGINE_ANY */
int isa_op_from_mnemonic(const char *s);   /* -1 if unknown */

/* Encoding. isa_encode fails if a value does not fit its field. isa_decode
 * fails on an unknown opcode, a bad dtype/space or non-zero padding; the
 * message names the op and field. */
int isa_encode(const AtlInsn *in, uint8_t out[ISA_INSN_BYTES], AtlErr *e);
int isa_decode(const uint8_t in[ISA_INSN_BYTES], AtlInsn *out, AtlErr *e);

/* One-line disassembly in the assembler's syntax (round-trips through
 * isa_asm_line). Returns the length written (truncated to cap-1). */
int isa_disasm(const AtlInsn *in, char *buf, size_t cap);
/* Addition (isa branch): parses one instruction line in the assembler's
 * syntax (docs/asm.md) without directives or symbols; the inverse of
 * isa_disasm. Errors name the mnemonic and field. */
int isa_asm_line(const char *text, AtlInsn *out, AtlErr *e);
#endif

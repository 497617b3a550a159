/* test_operands.c - isa/operands.c: each operand's element geometry (shape,
 * byte strides, element size) next to its byte range, and
 * isa_operands_disjoint: tiles of one tensor side by side, a block and the
 * padding rows around it are proven disjoint, overlapping ones are not, and over thousands of random strided
 * operands it never calls two operands disjoint that share a byte (checked
 * byte by byte) while proving many whose byte ranges overlap. */
#include <string.h>
#include "test/test.h"
#include "test/sim/simtest.h"
#include "isa/operands.h"

/* The dst operand of a DMA copy into DRAM. */
static IsaOperand dst_of(AtlInsn in)
{
    IsaOperand ops[ISA_MAX_OPERANDS];
    int n = isa_operands(&in, ops);
    CHECK(n == 2);
    return ops[0];
}

static AtlInsn store(int dt, uint64_t dram, uint32_t s2, uint32_t s3, int32_t st2, int32_t st3)
{
    AtlInsn x = I_store(dram, 0, 1);
    x.dtype = (uint8_t)dt;
    x.shape[2] = s2; x.shape[3] = s3;
    x.dst_stride[2] = st2; x.dst_stride[3] = st3;
    return x;
}

TEST(geometry)
{
    IsaOperand o = dst_of(store(ISA_F32, 0x1000, 64, 16, 128, 4));
    CHECK_EQ_INT(o.lo, 0x1000);
    CHECK_EQ_INT(o.hi, 0x1000 + 63 * 128 + 15 * 4 + 4);
    CHECK_EQ_INT(o.shape[2], 64);
    CHECK_EQ_INT(o.shape[3], 16);
    CHECK_EQ_INT(o.stride[2], 128);
    CHECK_EQ_INT(o.stride[3], 4);
    CHECK_EQ_INT(o.esize, 4);
    /* a gather's source covers `limit` rows along d1 */
    AtlInsn g = I(ISA_OP_DMA_GATHER);
    g.dtype = ISA_I8; g.dst_space = g.src_space = g.src2_space = ISA_SPACE_DRAM;
    g.shape[0] = g.shape[1] = g.shape[2] = 1; g.shape[3] = 8; g.limit = 5;
    g.src_stride[1] = 8; g.src_stride[3] = 1;
    IsaOperand ops[ISA_MAX_OPERANDS];
    CHECK_EQ_INT(isa_operands(&g, ops), 3);
    CHECK_EQ_INT(ops[1].shape[1], 5);
    CHECK_EQ_INT(ops[1].hi - ops[1].lo, 4 * 8 + 8);
    CHECK_EQ_INT(ops[2].esize, 4);
    /* a dense compute operand: one element of its bytes */
    AtlInsn mm = I_mm(ISA_I8, 0x100, 0x200, 0x300, 4, 8, 16);
    CHECK_EQ_INT(isa_operands(&mm, ops), 3);
    CHECK_EQ_INT(ops[0].esize, 4 * 8);
    CHECK_EQ_INT(ops[0].shape[0] * ops[0].shape[1] * ops[0].shape[2] * ops[0].shape[3], 1);
}

TEST(tiles)
{
    /* column tiles [0, 16) and [16, 32) of a 64 x 32 f32 matrix: interleaved, disjoint */
    IsaOperand a = dst_of(store(ISA_F32, 0x1000, 64, 16, 128, 4));
    IsaOperand b = dst_of(store(ISA_F32, 0x1000 + 64, 64, 16, 128, 4));
    CHECK(a.hi > b.lo && b.hi > a.lo);
    CHECK(isa_operands_disjoint(&a, &b));
    CHECK(isa_operands_disjoint(&b, &a));
    /* columns [12, 28): four shared */
    IsaOperand c = dst_of(store(ISA_F32, 0x1000 + 48, 64, 16, 128, 4));
    CHECK(!isa_operands_disjoint(&a, &c));
    CHECK(!isa_operands_disjoint(&c, &a));
    /* rows [0, 14) and [14, 28) of each of 6 planes (28 x 28 f32, NCHW),
     * 3 columns each: disjoint only by the plane period */
    AtlInsn r = store(ISA_F32, 0x75000, 14, 3, 112, 4);
    r.shape[1] = 6; r.dst_stride[1] = 3136;
    IsaOperand r0 = dst_of(r);
    r.dst += 14 * 112;
    IsaOperand r1 = dst_of(r);
    CHECK(isa_operands_disjoint(&r0, &r1));
    r.dst -= 112; /* rows [13, 27): row 13 shared */
    IsaOperand r2 = dst_of(r);
    CHECK(!isa_operands_disjoint(&r0, &r2));
    /* a fill of the padding rows around a block and the copy of the block
     * (Pad, pooling with pads): rows 0 and 2 of 12 bytes, pitch 188, vs
     * the 160 bytes between them */
    AtlInsn fill = store(ISA_F32, 0x0, 2, 3, 188, 4);
    fill.op = ISA_OP_DMA_FILL;
    IsaOperand ops[ISA_MAX_OPERANDS];
    CHECK_EQ_INT(isa_operands(&fill, ops), 1);
    IsaOperand pad = ops[0];
    IsaOperand mid = dst_of(store(ISA_F32, 0xc, 1, 40, 0, 4));
    CHECK(isa_operands_disjoint(&pad, &mid));
    CHECK(isa_operands_disjoint(&mid, &pad));
    IsaOperand mid_long = dst_of(store(ISA_F32, 0xc, 1, 45, 0, 4)); /* reaches the second padding row */
    CHECK(!isa_operands_disjoint(&pad, &mid_long));
    /* every other element of 3 rows zeroed vs 5 elements between two rows */
    fill = store(ISA_F32, 0x6c98, 3, 3, 48, 8);
    fill.op = ISA_OP_DMA_FILL;
    isa_operands(&fill, ops);
    IsaOperand holes = ops[0];
    IsaOperand gap = dst_of(store(ISA_F32, 0x6cb0, 1, 5, 0, 4));
    CHECK(isa_operands_disjoint(&holes, &gap));
    /* byte ranges apart: disjoint whatever the geometry */
    IsaOperand far = dst_of(store(ISA_I8, 0x100000, 1, 1, 0, 1));
    CHECK(isa_operands_disjoint(&a, &far));
    /* the same operand is not disjoint from itself */
    CHECK(!isa_operands_disjoint(&a, &a));
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

#define SPAN 4096
/* Marks the bytes of o (offset by SPAN / 2) in m. */
static void bytes_of(const IsaOperand *o, uint8_t *m)
{
    memset(m, 0, SPAN);
    for (uint32_t i0 = 0; i0 < o->shape[0]; i0++)
        for (uint32_t i1 = 0; i1 < o->shape[1]; i1++)
            for (uint32_t i2 = 0; i2 < o->shape[2]; i2++)
                for (uint32_t i3 = 0; i3 < o->shape[3]; i3++) {
                    int64_t at = (int64_t)o->base + i0 * o->stride[0] + i1 * o->stride[1] + i2 * o->stride[2] + i3 * o->stride[3];
                    for (int64_t e = 0; e < o->esize; e++) m[at + e + SPAN / 2 - 1024] = 1;
                }
}

static IsaOperand random_operand(void)
{
    static const int dts[] = {ISA_I8, ISA_F16, ISA_F32};
    AtlInsn x = I_store(1024 + rnd(256), 0, 1);
    x.dtype = (uint8_t)dts[rnd(3)];
    int es = isa_dtype_size(x.dtype);
    for (int d = 0; d < 4; d++) {
        x.shape[d] = 1 + rnd(d == 0 ? 2 : 4);
        x.dst_stride[d] = ((int32_t)rnd(33) - 8) * es; /* -8 .. 24 elements, often tiles of one row */
    }
    x.dst = (x.dst / (uint64_t)es) * (uint64_t)es;
    return dst_of(x);
}

TEST(random_never_unsound)
{
    static uint8_t ma[SPAN], mb[SPAN];
    int proven = 0, overlapping_ranges = 0, unsound = 0;
    for (int t = 0; t < 20000; t++) {
        IsaOperand a = random_operand(), b = random_operand();
        if (t % 2) { b = a; b.base += (uint64_t)rnd(64); b.lo = a.lo + (int64_t)(b.base - a.base); b.hi = a.hi + (int64_t)(b.base - a.base); }
        int claim = isa_operands_disjoint(&a, &b);
        CHECK_EQ_INT(claim, isa_operands_disjoint(&b, &a));
        if (!claim) continue;
        bytes_of(&a, ma);
        bytes_of(&b, mb);
        int shared = 0;
        for (int i = 0; i < SPAN; i++) shared |= ma[i] & mb[i];
        if (shared) unsound++;
        if (a.hi > b.lo && b.hi > a.lo) overlapping_ranges++;
        proven++;
    }
    CHECKF(unsound == 0, "%d pairs called disjoint share a byte", unsound);
    CHECKF(overlapping_ranges > 500, "only %d of %d proven pairs had overlapping byte ranges", overlapping_ranges, proven);
}

int main(void)
{
    RUN(geometry);
    RUN(tiles);
    RUN(random_never_unsound);
    return test_summary("test_operands");
}

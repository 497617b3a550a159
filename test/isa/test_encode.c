/* test_encode.c - the binary encoding: random round trips of every op,
 * the exact header/field bit layout, encoder overflow errors and decoder
 * rejections, each with the message it must give. */
#include "test/test.h"
#include "test/isa/rand_insn.h"

TEST(random_round_trip_every_op)
{
    uint64_t seed = 1;
    AtlErr e;
    for (int op = 0; op < ISA_NUM_OPS; op++)
        for (int n = 0; n < 400; n++) {
            AtlInsn in, out;
            uint8_t enc[ISA_INSN_BYTES];
            rand_insn(&seed, op, &in);
            if (isa_encode(&in, enc, &e)) { CHECKF(0, "%s: encode failed: %s", isa_ops[op].mnemonic, e.msg); return; }
            if (isa_decode(enc, &out, &e)) { CHECKF(0, "%s: decode failed: %s", isa_ops[op].mnemonic, e.msg); return; }
            if (memcmp(&in, &out, sizeof in) != 0) { CHECKF(0, "%s: round trip differs (sample %d)", isa_ops[op].mnemonic, n); return; }
        }
}

TEST(header_and_first_field_bit_layout)
{
    AtlInsn in = {0};
    in.op = ISA_OP_BARRIER;
    in.wait = 3;
    in.signal = 4;
    in.layer = 0x1234;
    in.scope = 1;
    in.bar_id = 0xAB;
    in.bar_count = 0x1234;
    uint8_t enc[ISA_INSN_BYTES];
    AtlErr e;
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    CHECK_EQ_INT(enc[0], ISA_OP_BARRIER);
    CHECK_EQ_INT(enc[1], 3);
    CHECK_EQ_INT(enc[2], 4);
    CHECK_EQ_INT(enc[3], 0x34);
    CHECK_EQ_INT(enc[4], 0x12);
    /* scope at bit 40, id at 41..48, count at 49..64 */
    CHECK_EQ_INT(enc[5], 0x57);
    CHECK_EQ_INT(enc[6], 0x69);
    CHECK_EQ_INT(enc[7], 0x24);
    for (int i = 8; i < ISA_INSN_BYTES; i++) CHECK_EQ_INT(enc[i], 0);
}

TEST(negative_values_sign_extend)
{
    AtlInsn in = {0}, out;
    in.op = ISA_OP_V_ADD;
    in.dst_stride[0] = -1;
    in.src_stride[3] = -(1 << 23);
    in.src2_stride[1] = (1 << 23) - 1;
    uint8_t enc[ISA_INSN_BYTES];
    AtlErr e;
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    REQUIRE(isa_decode(enc, &out, &e) == 0);
    CHECK_EQ_INT(out.dst_stride[0], -1);
    CHECK_EQ_INT(out.src_stride[3], -(1 << 23));
    CHECK_EQ_INT(out.src2_stride[1], (1 << 23) - 1);
}

static void expect_encode_error(AtlInsn *in, const char *msg)
{
    uint8_t enc[ISA_INSN_BYTES];
    AtlErr e = {{0}};
    CHECKF(isa_encode(in, enc, &e) == -1, "encode accepted, wanted \"%s\"", msg);
    CHECK_STR_CONTAINS(e.msg, msg);
}

TEST(encode_rejects_values_that_do_not_fit)
{
    AtlInsn in = {0};
    in.op = ISA_OP_MM;
    in.m = 65536;
    expect_encode_error(&in, "mm: field m: value 65536 (0x10000) does not fit in 16 bits");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_COPY;
    in.shape[2] = 70000;
    expect_encode_error(&in, "dma.copy: field shape[2]: value 70000");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_COPY;
    in.dst = (uint64_t)1 << 40;
    expect_encode_error(&in, "dma.copy: field dst: value 1099511627776");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_V_ADD;
    in.dst_stride[1] = 1 << 23;
    expect_encode_error(&in, "v.add: field dstride[1]: value 8388608 does not fit in 24 signed bits");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_V_REQUANT;
    in.lo = -129;
    expect_encode_error(&in, "v.requant: field lo: value -129 does not fit in 8 signed bits (-128..127)");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_CONV;
    in.sh = 64;
    expect_encode_error(&in, "conv: field sh: value 64");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_COPY;
    in.src_core = 32;
    expect_encode_error(&in, "dma.copy: field src_core: value 32");
}

TEST(encode_rejects_bad_codes)
{
    AtlInsn in = {0};
    in.op = ISA_OP_MM;
    in.dtype = ISA_NUM_DTYPES;
    expect_encode_error(&in, "mm: field dtype: bad dtype code 6");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_FILL;
    in.dst_space = ISA_NUM_SPACES;
    expect_encode_error(&in, "dma.fill: field dst: bad space code 4");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_MM;
    in.acc = 2;
    expect_encode_error(&in, "mm: field acc: flag must be 0 or 1, not 2");
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_NOP;
    in.wait = ISA_MAX_SEMAPHORES + 1;
    expect_encode_error(&in, "nop: field wait: semaphore 32 out of range 0..31");
    memset(&in, 0, sizeof in);
    in.op = ISA_NUM_OPS;
    expect_encode_error(&in, "cannot encode unknown opcode");
}

static void expect_decode_error(const uint8_t *enc, const char *msg)
{
    AtlInsn out;
    AtlErr e = {{0}};
    CHECKF(isa_decode(enc, &out, &e) == -1, "decode accepted, wanted \"%s\"", msg);
    CHECK_STR_CONTAINS(e.msg, msg);
}

TEST(decode_rejects_bad_words)
{
    uint8_t enc[ISA_INSN_BYTES] = {0};
    enc[0] = 0xff;
    expect_decode_error(enc, "unknown opcode 0xff");
    AtlInsn in = {0};
    AtlErr e;
    in.op = ISA_OP_MM;
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    enc[5] |= 7; /* dtype occupies bits 40..42 */
    expect_decode_error(enc, "mm: field dtype: bad dtype code 7");
    in.op = ISA_OP_DMA_COPY;
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    /* every 2-bit space code names a space (3: another cluster's SRAM) */
    enc[10] |= 0x18; /* dst space: bits 83..84 (after dtype:3 and the 40-bit offset) */
    AtlInsn peer;
    REQUIRE(isa_decode(enc, &peer, &e) == 0);
    CHECK_EQ_INT(peer.dst_space, ISA_SPACE_PEER);
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    enc[63] |= 0x80;
    expect_decode_error(enc, "dma.copy: non-zero padding at bit 511");
    in.op = ISA_OP_NOP;
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    enc[5] = 1;
    expect_decode_error(enc, "nop: non-zero padding at bit 40");
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    enc[1] = ISA_MAX_SEMAPHORES + 1;
    expect_decode_error(enc, "nop: field wait: semaphore code 33");
}

TEST(every_padding_bit_is_checked)
{
    uint64_t seed = 7;
    AtlErr e;
    for (int op = 0; op < ISA_NUM_OPS; op++) {
        AtlInsn in;
        uint8_t enc[ISA_INSN_BYTES];
        rand_insn(&seed, op, &in);
        REQUIRE(isa_encode(&in, enc, &e) == 0);
        int bad = 0;
        /* the top bit is always padding (no format uses all 512 bits) */
        enc[63] ^= 0x80;
        AtlInsn out;
        if (isa_decode(enc, &out, &e) == 0) bad = 1;
        CHECKF(!bad, "%s: flipped padding bit accepted", isa_ops[op].mnemonic);
    }
}

int main(void)
{
    RUN(random_round_trip_every_op);
    RUN(header_and_first_field_bit_layout);
    RUN(negative_values_sign_extend);
    RUN(encode_rejects_values_that_do_not_fit);
    RUN(encode_rejects_bad_codes);
    RUN(decode_rejects_bad_words);
    RUN(every_padding_bit_is_checked);
    return test_summary("test_encode");
}

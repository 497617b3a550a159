/* test_asm.c - assembler, disassembler and program image: random
 * disasm -> asm round trips of every op, the operand syntax (short shapes,
 * symbols, expressions, floats), every assembler error with its message and
 * line, data generators, program text round trip, binary image round trip
 * and every corruption the loader must catch. */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include "test/test.h"
#include "test/isa/rand_insn.h"
#include "isa/program.h"
#include "isa/config.h"
#include "util/file.h"

TEST(disasm_asm_round_trip_every_op)
{
    uint64_t seed = 42;
    AtlErr e;
    for (int op = 0; op < ISA_NUM_OPS; op++)
        for (int n = 0; n < 300; n++) {
            AtlInsn in, out;
            char line[1024];
            rand_insn(&seed, op, &in);
            int len = isa_disasm(&in, line, sizeof line);
            REQUIRE(len > 0 && (size_t)len < sizeof line);
            if (isa_asm_line(line, &out, &e)) { CHECKF(0, "'%s' does not assemble: %s", line, e.msg); return; }
            if (memcmp(&in, &out, sizeof in)) { CHECKF(0, "'%s' reassembles differently", line); return; }
        }
}

TEST(example_line_and_defaults)
{
    AtlInsn in;
    AtlErr e;
    REQUIRE(isa_asm_line("dma.copy dtype=i8 dst=lmem:0x0 src=dram:0x1000 shape=1,1,64,64 dstride=0,0,64,1 "
                         "sstride=0,0,256,1 mask=0 wait=1 signal=2 layer=3", &in, &e) == 0);
    CHECK_EQ_INT(in.op, ISA_OP_DMA_COPY);
    CHECK_EQ_INT(in.dst_space, ISA_SPACE_LMEM);
    CHECK_EQ_INT(in.src_space, ISA_SPACE_DRAM);
    CHECK_EQ_INT(in.src, 0x1000);
    CHECK_EQ_INT(in.shape[2], 64);
    CHECK_EQ_INT(in.src_stride[2], 256);
    CHECK_EQ_INT(in.wait, 2);   /* semaphore 1, encoded +1 */
    CHECK_EQ_INT(in.signal, 3);
    CHECK_EQ_INT(in.layer, 3);
    CHECK_EQ_INT(in.src_core, 0); /* optional, defaulted */
    REQUIRE(isa_asm_line("v.add dtype=f32 dst=0x100 src=lmem:0x200 src2=8*64 shape=16,64 dstride=64,1 "
                         "sstride=1 s2stride=-1,0  # comment", &in, &e) == 0);
    CHECK_EQ_INT(in.shape[0], 1);
    CHECK_EQ_INT(in.shape[1], 1);
    CHECK_EQ_INT(in.shape[2], 16);
    CHECK_EQ_INT(in.shape[3], 64);
    CHECK_EQ_INT(in.dst_stride[0], 0);
    CHECK_EQ_INT(in.dst_stride[2], 64);
    CHECK_EQ_INT(in.src_stride[3], 1);
    CHECK_EQ_INT(in.src2_stride[2], -1);
    CHECK_EQ_INT(in.src2, 512);
    REQUIRE(isa_asm_line("v.affine dtype=f32 dst=0 src=0 shape=4 dstride=1 sstride=1 alpha=0.5 beta=-inf", &in, &e) == 0);
    CHECK(in.alpha == 0.5f);
    CHECK(isinf(in.beta) && in.beta < 0);
    REQUIRE(isa_asm_line("v.relu dtype=i8 dst=0 src=0 shape=4 dstride=1 sstride=1 alpha=bits:0x7fc00001", &in, &e) == 0);
    uint32_t bits;
    memcpy(&bits, &in.alpha, 4);
    CHECK_EQ_INT(bits, 0x7fc00001);
    char line[256];
    isa_disasm(&in, line, sizeof line);
    CHECK_STR_CONTAINS(line, "alpha=bits:0x7fc00001 beta=0");
}

static void expect_line_error(const char *line, const char *msg)
{
    AtlInsn in;
    AtlErr e = {{0}};
    CHECKF(isa_asm_line(line, &in, &e) == -1, "accepted '%s'", line);
    CHECK_STR_CONTAINS(e.msg, msg);
}

TEST(instruction_errors_name_mnemonic_and_field)
{
    expect_line_error("dma.cpy dtype=i8", "unknown instruction 'dma.cpy'");
    expect_line_error("mm dtype=i8 dst=0 src=0 src2=0 m=1 k=1 n=1 lda=1 ldb=1 ldc=1 foo=3",
                      "mm: unknown field 'foo' (fields: dtype acc dst src src2 m k n lda ldb ldc wait signal layer)");
    expect_line_error("mm dtype=i8 dst=0 src=0 src2=0 m=1 k=1 n=1 lda=1 ldb=1", "mm: missing field ldc");
    expect_line_error("mm dtype=i8 dtype=f32", "mm: field dtype given twice");
    expect_line_error("mm dtype=i4", "mm: field dtype: unknown dtype 'i4'");
    expect_line_error("mm dtype=i8 m=65536", "mm: field m: 65536 out of range 0..65535 (16 bits)");
    expect_line_error("mm dtype=i8 m=-1", "mm: field m: -1 out of range");
    expect_line_error("mm dtype=i8 acc=2", "mm: field acc: must be 0 or 1, not 2");
    expect_line_error("mm dtype=i8 dst=dram:0", "mm: field dst: operand must be in lmem, not dram");
    expect_line_error("dma.fill dtype=i8 dst=0x10", "dma.fill: field dst: needs a space");
    expect_line_error("dma.fill dtype=i8 dst=flash:0x10", "dma.fill: field dst: unknown memory space 'flash'");
    expect_line_error("dma.fill dtype=i8 shape=1,2,3,4,5", "dma.fill: field shape: more than 4 values");
    expect_line_error("dma.fill dtype=i8 shape=1,70000", "dma.fill: field shape[3]: 70000 out of range");
    expect_line_error("v.add dstride=8388608", "v.add: field dstride[3]: 8388608 out of range -8388608..8388607");
    expect_line_error("v.requant value=200", "v.requant: field value: 200 out of range -128..127");
    expect_line_error("mm m=12q", "mm: field m: bad number '12q'");
    expect_line_error("mm m=N", "mm: field m: unknown symbol 'N'");
    expect_line_error("mm m", "mm: operand 'm' is not key=value");
    expect_line_error("mm m=", "mm: field m: missing value");
    expect_line_error("nop wait=32", "nop: field wait: semaphore 32 out of range 0..31");
    expect_line_error("nop layer=70000", "nop: field layer: 70000 out of range 0..65535");
    expect_line_error("v.affine alpha=1e39", "v.affine: field alpha: 1e39 overflows f32");
    expect_line_error("   # only a comment", "empty instruction");
    /* peer operands: NAME@CLUSTER:OFFSET, for the peer space only */
    expect_line_error("dma.copy dtype=i8 dst=peer:0x40", "dma.copy: field dst: a peer operand names its cluster: peer@CLUSTER:OFFSET");
    expect_line_error("dma.copy dtype=i8 dst=sram@1:0x40", "dma.copy: field dst: only a peer space names a cluster");
    expect_line_error("dma.copy dtype=i8 dst=peer@256:0x40", "dma.copy: field dst: cluster 256 out of range 0..255");
    expect_line_error("dma.copy dtype=i8 dst=peer@C:0x40", "dma.copy: field dst: cluster: unknown symbol 'C'");
    expect_line_error("dma.copy dtype=i8 dst=peer@1:0x100000000", "dma.copy: field dst: offset 4294967296 out of range 0..0xffffffff");
}

/* A peer operand keeps its cluster and offset through assembly,
 * disassembly, encoding and decoding. */
TEST(peer_operand_round_trip)
{
    const char *line = "dma.copy dtype=f32 dst=peer@3:0x1240 src=lmem:0x80 src_core=1 mask=5 shape=1,1,2,16 "
                       "dstride=0,0,64,4 sstride=0,0,64,4 signal=2";
    AtlInsn in, back;
    AtlErr e = {{0}};
    REQUIRE(isa_asm_line(line, &in, &e) == 0);
    CHECK_EQ_INT(in.dst_space, ISA_SPACE_PEER);
    CHECK_EQ_INT(isa_peer_cluster(in.dst), 3);
    CHECK(isa_peer_offset(in.dst) == 0x1240);
    char text[512];
    isa_disasm(&in, text, sizeof text);
    CHECK_STR_CONTAINS(text, "dst=peer@3:0x1240 src=lmem:0x80");
    REQUIRE(isa_asm_line(text, &back, &e) == 0);
    CHECK(!memcmp(&in, &back, sizeof in));
    uint8_t enc[ISA_INSN_BYTES];
    REQUIRE(isa_encode(&in, enc, &e) == 0);
    REQUIRE(isa_decode(enc, &back, &e) == 0);
    CHECK(!memcmp(&in, &back, sizeof in));
}

static const char *demo_program =
    "# demo: two cores, every directive\n"
    ".equ N 64            ; elements\n"
    ".equ LM 0x100\n"
    ".data A dram:0x1000 i8 1 -2 3 127 -128\n"
    ".data B dram:0x2000 f32 range 0.5 0.25 4\n"
    ".data R dram:0x3000 i8 random 7 N -3 3\n"
    ".data H dram:0x4000 f16 1.0 0.1 -2 65504\n"
    ".data BF dram:0x4100 bf16 1.0 -3.5\n"
    ".data X dram:0x4200 i16 hex 0102 \\\n"
    "    0304\n"
    ".zero Z dram:0x5000 256\n"
    ".expect OUT dram:0x5000 i32 shape=2,2 1 2 3 4\n"
    ".expect F dram:0x6000 f32 shape=3 tol=0.01 range 0 1 3\n"
    ".output Y dram:0x7000 f16 shape=1,2,3\n"
    ".core 1\n"
    ".engine dma\n"
    "    dma.copy dtype=i8 dst=lmem:LM src=dram:A+1 shape=N dstride=1 sstride=1 signal=0\n"
    "    end\n"
    ".engine vec\n"
    "    v.relu dtype=i8 dst=LM+N src=LM shape=N dstride=1 sstride=1 wait=0 layer=5\n"
    "    barrier scope=1 id=3 count=2\n"
    "    end\n";

TEST(program_directives_and_generators)
{
    AtlProgram p;
    AtlErr e;
    if (prog_assemble("demo.s", demo_program, &p, &e)) { CHECKF(0, "%s", e.msg); return; }
    CHECK_EQ_INT(p.ncores, 2);
    CHECK_EQ_INT(prog_stream(&p, 0, ISA_ENGINE_DMA)->count, 0);
    AtlStream *d = prog_stream(&p, 1, ISA_ENGINE_DMA), *v = prog_stream(&p, 1, ISA_ENGINE_VEC);
    REQUIRE(d->count == 2 && v->count == 3);
    CHECK_EQ_INT(d->insns[0].src, 0x1001);
    CHECK_EQ_INT(d->insns[0].dst, 0x100);
    CHECK_EQ_INT(d->insns[0].shape[3], 64);
    CHECK_EQ_INT(d->src_line[0], 17);
    CHECK_EQ_INT(v->insns[0].dst, 0x140);
    CHECK_EQ_INT(v->insns[0].layer, 5);
    CHECK_EQ_INT(v->insns[1].op, ISA_OP_BARRIER);
    CHECK_EQ_INT(v->src_line[2], 22);
    REQUIRE(p.nsegs == 7);
    CHECK(p.segs[0].size == 5 && (int8_t)p.segs[0].bytes[1] == -2 && (int8_t)p.segs[0].bytes[4] == -128);
    float b[4];
    REQUIRE(p.segs[1].size == 16);
    memcpy(b, p.segs[1].bytes, 16);
    CHECK(b[0] == 0.5f && b[3] == 1.25f);
    REQUIRE(p.segs[2].size == 64);
    int lo = 0, hi = 0;
    for (int i = 0; i < 64; i++) {
        int8_t x = (int8_t)p.segs[2].bytes[i];
        CHECK(x >= -3 && x <= 3);
        lo |= x == -3;
        hi |= x == 3;
    }
    CHECK(lo && hi);
    uint16_t h[4];
    memcpy(h, p.segs[3].bytes, 8);
    CHECK_EQ_INT(h[0], 0x3c00);
    CHECK_EQ_INT(h[1], 0x2e66);
    CHECK_EQ_INT(h[2], 0xc000);
    CHECK_EQ_INT(h[3], 0x7bff);
    memcpy(h, p.segs[4].bytes, 4);
    CHECK_EQ_INT(h[0], 0x3f80);
    CHECK_EQ_INT(h[1], 0xc060);
    CHECK(p.segs[5].size == 4 && p.segs[5].bytes[0] == 1 && p.segs[5].bytes[3] == 4);
    CHECK(p.segs[6].size == 256 && p.segs[6].bytes[255] == 0);
    REQUIRE(p.nregions == 3);
    CHECK(p.regions[0].ndim == 2 && p.regions[0].expect && p.regions[0].expect[12] == 4);
    CHECK_NEAR(p.regions[1].tolerance, 0.01, 0);
    CHECK(p.regions[2].expect == NULL && p.regions[2].ndim == 3 && p.regions[2].shape[2] == 3);
    CHECK_EQ_INT(prog_region_bytes(&p.regions[2]), 12);
    prog_free(&p);
}

TEST(random_generator_is_deterministic)
{
    AtlProgram p1, p2;
    AtlErr e;
    REQUIRE(prog_assemble("a", ".data R dram:0 f32 random 99 100\n", &p1, &e) == 0);
    REQUIRE(prog_assemble("b", ".data R dram:0 f32 random 99 100\n", &p2, &e) == 0);
    CHECK(memcmp(p1.segs[0].bytes, p2.segs[0].bytes, 400) == 0);
    float f[100];
    memcpy(f, p1.segs[0].bytes, 400);
    for (int i = 0; i < 100; i++) CHECK(f[i] >= -1.0f && f[i] < 1.0f);
    CHECK(f[0] != f[1]);
    prog_free(&p1);
    prog_free(&p2);
}

/* One element of dtype `d` from a .data line, as raw bits. */
static int data_bits(const char *dtype, const char *value, uint32_t *bits, char *err)
{
    char text[128];
    snprintf(text, sizeof text, ".data V dram:0 %s %s\n", dtype, value);
    AtlProgram p;
    AtlErr e;
    if (prog_assemble("h.s", text, &p, &e)) { snprintf(err, 200, "%s", e.msg); return -1; }
    *bits = 0;
    memcpy(bits, p.segs[0].bytes, p.segs[0].size);
    prog_free(&p);
    return 0;
}

TEST(half_precision_rounding)
{
    static const struct { const char *dtype, *value; uint32_t bits; } cases[] = {
        {"f16", "1", 0x3c00},        {"f16", "-0", 0x8000},       {"f16", "65504", 0x7bff},
        {"f16", "65519", 0x7bff},    /* just below the halfway point to 65536 */
        {"f16", "6.1035156e-05", 0x0400}, /* smallest normal */
        {"f16", "5.9604645e-08", 0x0001}, /* smallest subnormal */
        {"f16", "2.9802322e-08", 0x0000}, /* half of it: ties to even (0) */
        {"f16", "8.9406967e-08", 0x0002}, /* 1.5 x smallest: ties to even (2) */
        {"f16", "1e-9", 0x0000},     {"f16", "inf", 0x7c00},      {"f16", "-inf", 0xfc00},
        {"f16", "1.0009766", 0x3c01}, {"f16", "1.00048828125", 0x3c00}, /* tie -> even */
        {"f16", "1.00146484375", 0x3c02}, /* tie -> even (up) */
        {"bf16", "1", 0x3f80},       {"bf16", "1.00390625", 0x3f80}, /* tie -> even */
        {"bf16", "1.01171875", 0x3f82}, /* tie -> even (up) */
        {"bf16", "-2.5", 0xc020},    {"bf16", "3.3895314e38", 0x7f7f},
        {"f32", "0.1", 0x3dcccccd},  {"i16", "-2", 0xfffe},       {"i32", "-1", 0xffffffff},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t b;
        char err[200];
        if (data_bits(cases[i].dtype, cases[i].value, &b, err)) { CHECKF(0, "%s %s: %s", cases[i].dtype, cases[i].value, err); continue; }
        CHECKF(b == cases[i].bits, "%s %s -> 0x%x, want 0x%x", cases[i].dtype, cases[i].value, b, cases[i].bits);
    }
    uint32_t b;
    char err[200];
    CHECK(data_bits("f16", "65520", &b, err) == -1); /* rounds to 65536 = inf */
    CHECK_STR_CONTAINS(err, "value 65520 at index 0 overflows f16");
    CHECK(data_bits("bf16", "3.4e38", &b, err) == -1);
    CHECK_STR_CONTAINS(err, "overflows bf16");
    CHECK(data_bits("f32", "1e39", &b, err) == -1);
    CHECK_STR_CONTAINS(err, "overflows f32");
}

TEST(disasm_truncates_safely)
{
    AtlInsn in;
    AtlErr e;
    REQUIRE(isa_asm_line("mm dtype=i8 dst=0 src=0x40 src2=0x80 m=8 k=8 n=8 lda=8 ldb=8 ldc=8", &in, &e) == 0);
    char full[256], small[16];
    int n = isa_disasm(&in, full, sizeof full);
    CHECK_EQ_INT(n, (int)strlen(full));
    CHECK_EQ_INT(isa_disasm(&in, small, sizeof small), 15);
    CHECK_EQ_INT(strlen(small), 15);
    CHECK(strncmp(small, full, 15) == 0);
    in.op = ISA_NUM_OPS;
    isa_disasm(&in, full, sizeof full);
    char want[32];
    snprintf(want, sizeof want, ".invalid op=%d", ISA_NUM_OPS);
    CHECK_STR_CONTAINS(full, want);
}

static void expect_prog_error(const char *text, const char *msg)
{
    AtlProgram p;
    AtlErr e = {{0}};
    int rc = prog_assemble("t.s", text, &p, &e);
    CHECKF(rc == -1, "accepted: %s", text);
    if (rc == 0) prog_free(&p);
    CHECK_STR_CONTAINS(e.msg, msg);
}

TEST(program_errors_name_file_and_line)
{
    expect_prog_error("\n\nnop\n", "t.s:3: nop: no engine selected for core 0");
    expect_prog_error(".engine mat\ndma.copy dtype=i8 dst=dram:0 src=dram:0 shape=1 dstride=1 sstride=1\n",
                      "t.s:2: dma.copy is a dma instruction but the current stream is core 0 mat");
    expect_prog_error(".engine gpu\n", "t.s:1: .engine: unknown engine 'gpu'");
    expect_prog_error(".frob 1\n", "t.s:1: unknown directive '.frob'");
    expect_prog_error(".equ A 1\n.equ A 2\n", "t.s:2: symbol 'A' already defined on line 1");
    expect_prog_error(".equ 9x 1\n", "t.s:1: bad name '9x'");
    expect_prog_error(".data A dram:0 i8 1 2 3\n.data B dram:2 i8 5\n", "t.s:2: B [0x2, 0x3) overlaps A [0x0, 0x3)");
    expect_prog_error(".data A dram:0 i8 300\n", "t.s:1: .data A: value 300 at index 0 out of i8 range -128..127");
    expect_prog_error(".data A dram:0 f16 70000\n", "t.s:1: .data A: value 70000 at index 0 overflows f16");
    expect_prog_error(".data A sram:0 i8 1\n", "t.s:1: .data: address must be dram:OFFSET");
    expect_prog_error(".data A dram:0 i9 1\n", "t.s:1: .data A: unknown dtype 'i9'");
    expect_prog_error(".data A dram:0 i16 hex 010\n", "even, non-zero number of hex digits");
    expect_prog_error(".data A dram:0 i32 hex 0102\n", "hex: 2 bytes is not a whole number of i32 elements");
    expect_prog_error(".data A dram:0 i8 hex 01zz\n", "hex: bad digit 'z'");
    expect_prog_error(".data A dram:0 i8 random 1\n", "random: expected SEED COUNT [LO HI]");
    expect_prog_error(".data A dram:0 i8 random 1 4 5 2\n", "random: LO 5 > HI 2");
    expect_prog_error(".data A dram:0 i8 range 100 10 4\n", "value 130 at index 3 out of i8 range");
    expect_prog_error(".data A dram:0 i8 1\n.data A dram:8 i8 1\n", "t.s:2: data 'A' defined twice");
    expect_prog_error(".zero Z dram:0 0\n", ".zero: bytes: 0 out of range");
    /* the fuzzer's case: one .zero asking for 671 MB is refused before allocating */
    expect_prog_error(".zero Z dram:0 0x28002800\n", "t.s:1: Z: 671098880 more bytes of DRAM data would pass the 256 MiB");
    expect_prog_error(".zero A dram:0 0x8000000\n.zero B dram:0x8000000 0x8000000\n.zero C dram:0x10000000 1\n",
                      "t.s:3: C: 1 more bytes of DRAM data would pass the 256 MiB a program may define (268435456 bytes so far)");
    {
        /* a smaller budget (fuzz_asm's 1 MiB): refused past it, accepted up to it */
        AtlProgram p;
        AtlErr e;
        CHECK(prog_assemble_limited("t.s", ".zero A dram:0 0x100001\n", 1 << 20, &p, &e) == -1);
        CHECK_STR_CONTAINS(e.msg, "t.s:1: A: 1048577 more bytes of DRAM data would pass the 1 MiB");
        REQUIRE(prog_assemble_limited("t.s", ".zero A dram:0 0x100000\n", 1 << 20, &p, &e) == 0);
        prog_free(&p);
        CHECK(prog_assemble_limited("t.s", ".zero Z dram:0 0x28002800\n", UINT64_MAX, &p, &e) == -1);
        CHECK_STR_CONTAINS(e.msg, "would pass the 256 MiB");
    }
    expect_prog_error(".expect O dram:0 i32 shape=2,2 1 2 3\n", "t.s:1: .expect O: 3 values given, shape needs 4");
    expect_prog_error(".expect O dram:0 i32 2,2 1 2 3 4\n", "expected shape=D0,D1,.. after the dtype");
    expect_prog_error(".expect O dram:0 f32 shape=1 tol=-1 0\n", "tol must be finite and >= 0");
    expect_prog_error(".output O dram:0xffffffffff i16 shape=1\n", "t.s:1: .output O: region [0xffffffffff, +2 bytes) goes beyond the 40-bit DRAM address space");
    expect_prog_error(".data A dram:0xffffffffff i8 1 2\n", "t.s:1: A: 0xffffffffff + 2 bytes is beyond the 40-bit DRAM address space");
    expect_prog_error(".output O dram:0 i32 shape=1,1,1,1,1\n", "shape has more than 4 dimensions");
    expect_prog_error(".output O dram:0 i32 shape=2\n.output O dram:8 i8 shape=1\n", "t.s:2: .output: region 'O' defined twice");
    expect_prog_error(".cores 2\n.core 2\n", "t.s:2: .core 2 is beyond .cores 2");
    expect_prog_error(".core 3\n.engine dma\nend\n.cores 2\n", "t.s:4: .cores 2: core 3 already has instructions");
    expect_prog_error("# a\n.engine vec \\\n\n v.add dtype=q\n", "t.s:4: v.add: field dtype: unknown dtype 'q'");
    expect_prog_error(".engine vec\nv.relu dtype=i8 dst=0 src=0 shape=4 dstride=1 sstride=1 layer=X\n",
                      "t.s:2: v.relu: field layer: unknown symbol 'X'");
}

/* Serialises both programs and compares the images. */
static int same_program(const AtlProgram *a, const AtlProgram *b)
{
    uint8_t *da, *db;
    size_t na, nb;
    AtlErr e;
    if (prog_serialize(a, &da, &na, &e) || prog_serialize(b, &db, &nb, &e)) return 0;
    int same = na == nb && !memcmp(da, db, na);
    free(da);
    free(db);
    return same;
}

static void random_program(AtlProgram *p, uint64_t seed)
{
    AtlErr e;
    prog_init(p, 3, &e);
    for (int op = 0; op < ISA_NUM_OPS; op++)
        for (int k = 0; k < 3; k++) {
            AtlInsn in;
            rand_insn(&seed, op, &in);
            int eng = isa_ops[op].engine == ISA_ENGINE_ANY ? k : isa_ops[op].engine;
            prog_append(p, k, eng, &in, 0, &e);
        }
    p->segs = calloc(2, sizeof *p->segs);
    p->nsegs = 2;
    for (int i = 0; i < 2; i++) {
        snprintf(p->segs[i].name, sizeof p->segs[i].name, "seg%d", i);
        p->segs[i].addr = 0x1000u * (unsigned)(i + 1);
        p->segs[i].size = 100 + (size_t)i;
        p->segs[i].bytes = malloc(p->segs[i].size);
        for (size_t j = 0; j < p->segs[i].size; j++) p->segs[i].bytes[j] = (uint8_t)rnd_next(&seed);
    }
    p->regions = calloc(2, sizeof *p->regions);
    p->nregions = 2;
    AtlRegion *r = &p->regions[0];
    snprintf(r->name, sizeof r->name, "out");
    r->addr = 0x8000;
    r->dtype = ISA_F16;
    r->ndim = 2;
    r->shape[0] = 3;
    r->shape[1] = 5;
    r->tolerance = 0.125;
    r->expect = malloc(30);
    for (int j = 0; j < 30; j++) r->expect[j] = (uint8_t)rnd_next(&seed);
    r = &p->regions[1];
    snprintf(r->name, sizeof r->name, "raw");
    r->addr = 0x9000;
    r->dtype = ISA_I32;
    r->ndim = 1;
    r->shape[0] = 7;
}

TEST(program_text_round_trip)
{
    AtlProgram p, q;
    AtlErr e;
    random_program(&p, 5);
    char *text = prog_to_text(&p);
    REQUIRE(text);
    if (prog_assemble("rt.s", text, &q, &e)) { CHECKF(0, "%s", e.msg); free(text); prog_free(&p); return; }
    CHECK(same_program(&p, &q));
    char *text2 = prog_to_text(&q);
    CHECK(text2 && !strcmp(strchr(text, '\n'), strchr(text2, '\n')));
    free(text);
    free(text2);
    prog_free(&q);
    REQUIRE(prog_assemble("demo.s", demo_program, &q, &e) == 0);
    text = prog_to_text(&q);
    AtlProgram r;
    REQUIRE(prog_assemble("demo2.s", text, &r, &e) == 0);
    CHECK(same_program(&q, &r));
    free(text);
    prog_free(&r);
    prog_free(&q);
    prog_free(&p);
}

TEST(binary_image_round_trip)
{
    AtlProgram p, q;
    AtlErr e;
    random_program(&p, 9);
    char path[] = "/tmp/atoll_prog_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    REQUIRE(prog_save(&p, path, &e) == 0);
    if (prog_load(path, &q, &e)) { CHECKF(0, "%s", e.msg); remove(path); prog_free(&p); return; }
    CHECK(same_program(&p, &q));
    CHECK_EQ_INT(q.ncores, 3);
    CHECK_NEAR(q.regions[0].tolerance, 0.125, 0);
    CHECK(q.regions[1].expect == NULL);
    prog_free(&q);
    REQUIRE(prog_load_any(path, &q, &e) == 0);
    CHECK(same_program(&p, &q));
    prog_free(&q);
    /* text through prog_load_any */
    char *text = prog_to_text(&p);
    REQUIRE(atl_write_file_atomic(path, text, strlen(text), &e) == 0);
    REQUIRE(prog_load_any(path, &q, &e) == 0);
    CHECK(same_program(&p, &q));
    free(text);
    prog_free(&q);
    REQUIRE(atl_write_file_atomic(path, "a\0b", 3, &e) == 0);
    CHECK(prog_load_any(path, &q, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "neither an Atoll program image nor assembler text");
    remove(path);
    prog_free(&p);
}

static void put32(uint8_t *d, uint32_t v) { for (int i = 0; i < 4; i++) d[i] = (uint8_t)(v >> (8 * i)); }
static void fix_crc(uint8_t *d, size_t n) { put32(d + n - 4, (uint32_t)crc32(0L, d, (uInt)(n - 4))); }

static void expect_load_error(const uint8_t *d, size_t n, const char *msg)
{
    AtlProgram q;
    AtlErr e = {{0}};
    int rc = prog_load_mem("img", d, n, &q, &e);
    CHECKF(rc == -1, "corrupt image accepted, wanted \"%s\"", msg);
    if (rc == 0) prog_free(&q);
    CHECK_STR_CONTAINS(e.msg, msg);
}

TEST(binary_image_corruption_is_reported)
{
    AtlProgram p;
    AtlErr e;
    random_program(&p, 11);
    uint8_t *img, *d;
    size_t n;
    REQUIRE(prog_serialize(&p, &img, &n, &e) == 0);
    d = malloc(n);
    REQUIRE(d);
#define RESET() memcpy(d, img, n)
    RESET(); d[0] = 'X';
    expect_load_error(d, n, "img: not an Atoll program image (bad magic)");
    RESET(); put32(d + 8, 9);
    expect_load_error(d, n, "img: unsupported image version 9");
    RESET(); d[200] ^= 1;
    expect_load_error(d, n, "img: checksum mismatch");
    expect_load_error(img, 20, "img: truncated header");
    expect_load_error(img, n - 10, "checksum mismatch");
    RESET(); put32(d + 12, 0); fix_crc(d, n);
    expect_load_error(d, n, "img: core count 0 out of range 1..2048");
    RESET(); put32(d + 24, 1000000); fix_crc(d, n);
    expect_load_error(d, n, "instruction counts (1000");
    /* stream 0 (core 0 dma) has its first instruction right after the counts */
    size_t first = 24 + 4 * 3 * 3;
    RESET(); d[first] = 0xee; fix_crc(d, n);
    expect_load_error(d, n, "img: core 0 dma insn 0: unknown opcode 0xee");
    RESET(); d[first + 63] = 0x80; fix_crc(d, n);
    expect_load_error(d, n, "img: core 0 dma insn 0: nop: non-zero padding at bit 511");
    RESET(); memset(d + first, 0, 64); d[first] = ISA_OP_MM; fix_crc(d, n);
    expect_load_error(d, n, "img: core 0 dma insn 0: mm is a mat instruction");
    /* first segment: name[64] addr size; its size field follows the instructions */
    size_t seg = n - 4 - 108 - (64 + 44 + 30) - (64 + 16 + 101) - (64 + 16 + 100);
    RESET(); memset(d + seg + 72, 0, 8); fix_crc(d, n);
    expect_load_error(d, n, "img: segment seg0 is empty");
    RESET(); put32(d + seg + 72, 0x7fffffff); fix_crc(d, n);
    expect_load_error(d, n, "img: segment seg0: size 2147483647 exceeds the file size");
    RESET(); put32(d + 16, 100000); fix_crc(d, n);
    expect_load_error(d, n, "segment count 100000 exceeds the file size");
    /* the last region ("raw", no expect) is the 108 bytes before the CRC */
    size_t reg = n - 4 - 108;
    RESET(); put32(d + reg + 72, 17); fix_crc(d, n);
    expect_load_error(d, n, "img: region raw: bad dtype code 17");
    RESET(); put32(d + reg + 76, 5); fix_crc(d, n);
    expect_load_error(d, n, "img: region raw: rank 5 out of range 1..4");
    RESET(); put32(d + reg + 80, 0); fix_crc(d, n);
    expect_load_error(d, n, "img: region raw: dimension 0 is 0");
    RESET(); put32(d + reg + 104, 1); fix_crc(d, n);
    expect_load_error(d, n, "img: region raw: expected values (28 bytes) exceed the file size");
    RESET(); memset(d + reg, 'x', 64); fix_crc(d, n);
    expect_load_error(d, n, "region name at byte");
    RESET(); d[reg + 10] = 'x'; fix_crc(d, n);
    expect_load_error(d, n, "is not NUL-padded");
    RESET(); d[reg] = '9'; fix_crc(d, n);
    expect_load_error(d, n, "is not a valid name");
    RESET(); memcpy(d + reg, "out", 4); fix_crc(d, n);
    expect_load_error(d, n, "img: region name out used twice");
    RESET(); d[reg + 96 + 7] = 0x80; fix_crc(d, n);
    expect_load_error(d, n, "img: region raw: negative tolerance");
    RESET(); d[reg + 96 + 6] = 0xf0; d[reg + 96 + 7] = 0x3f; fix_crc(d, n);
    expect_load_error(d, n, "img: region raw: an output region has a tolerance");
    RESET(); memcpy(d + seg + 64, "\xff\xff\xff\xff\xff\x00\x00\x00", 8); fix_crc(d, n);
    expect_load_error(d, n, "img: segment seg0 lies beyond the 40-bit address space");
    /* seg1 is at 0x2000 with 101 bytes; move seg0 (100 bytes) to 0x1fa0 */
    RESET(); memcpy(d + seg + 64, "\xa0\x1f\x00\x00\x00\x00\x00\x00", 8); fix_crc(d, n);
    expect_load_error(d, n, "img: segment seg1 overlaps seg0");
    uint8_t *big = malloc(n + 4);
    memcpy(big, img, n - 4);
    memset(big + n - 4, 0, 4);
    fix_crc(big, n + 4);
    expect_load_error(big, n + 4, "img: 4 unexpected trailing bytes");
    free(big);
    free(d);
    free(img);
    prog_free(&p);
}

/* Assembles `text` and checks it against configs/tiny.ini (or chip). */
static void expect_chip_error_on(const char *chip, const char *text, const char *msg)
{
    AtlChip c;
    AtlProgram p;
    AtlErr e = {{0}};
    REQUIRE(cfg_load(chip, &c, &e) == 0);
    if (prog_assemble("c.s", text, &p, &e)) { CHECKF(0, "does not assemble: %s", e.msg); return; }
    int rc = prog_check_chip(&p, &c, &e);
    prog_free(&p);
    if (!msg) { CHECKF(rc == 0, "rejected: %s", e.msg); return; }
    CHECKF(rc == -1, "accepted, wanted \"%s\"", msg);
    CHECK_STR_CONTAINS(e.msg, msg);
}

static void expect_chip_error(const char *text, const char *msg) { expect_chip_error_on("configs/tiny.ini", text, msg); }

TEST(program_checked_against_a_chip)
{
    /* another cluster's SRAM: only on a chip with cluster links, one of its clusters, inside its SRAM */
    const char *peer = ".engine dma\ndma.copy dtype=i8 dst=peer@1:0x100 src=lmem:0 shape=64 dstride=1 sstride=1\n";
    expect_chip_error_on("configs/a1-noc.ini", peer, NULL);
    expect_chip_error_on("configs/a1.ini", peer,
                         "c.s:2: core 0 dma insn 0: dst names cluster 1's SRAM, but chip a1 has no cluster links ([noc] cluster_links = 0)");
    expect_chip_error_on("configs/a1-noc.ini", ".engine dma\ndma.copy dtype=i8 dst=lmem:0 src=peer@4:0 shape=64 dstride=1 sstride=1\n",
                         "src peer@4:0x0 beyond chip a1-noc's 4 clusters of 4194304 bytes of SRAM");
    expect_chip_error_on("configs/a1-noc.ini", ".engine dma\ndma.copy dtype=i8 dst=lmem:0 src=peer@2:0x400000 shape=64 dstride=1 sstride=1\n",
                         "src peer@2:0x400000 beyond chip a1-noc's 4 clusters");
    expect_chip_error(".engine dma\ndma.copy dtype=i8 dst=lmem:0x40 src=dram:0x1000 shape=64 dstride=1 sstride=1 wait=15\n"
                      ".engine vec\nv.relu dtype=f32 dst=0x80 src=0x40 shape=16 dstride=1 sstride=1\n"
                      ".engine mat\nmm dtype=bf16 dst=0 src=0x40 src2=0x80 m=8 k=8 n=8 lda=8 ldb=8 ldc=8\n", NULL);
    expect_chip_error(".core 1\n", "c.s: program uses 2 cores, chip tiny has 1");
    expect_chip_error(".data D dram:0xffffff i8 1 2\n", "c.s: data D ends at 0x1000001, beyond chip tiny's 16777216 bytes of DRAM");
    expect_chip_error(".output O dram:0xfffff0 i32 shape=8\n", "c.s: region O ends at 0x1000010, beyond chip tiny's");
    expect_chip_error(".engine vec\n\nnop wait=16\n", "c.s:3: core 0 vec insn 0: semaphore 16 beyond the core's 16 (nop wait=16)");
    expect_chip_error(".engine dma\ndma.fill dtype=i8 dst=lmem:0 mask=2 shape=4 dstride=1 value=0\n",
                      "c.s:2: core 0 dma insn 0: mask 0x2 names cores beyond the cluster's 1");
    expect_chip_error(".engine dma\ndma.copy dtype=i8 dst=dram:0 src=lmem:0 src_core=1 shape=4 dstride=1 sstride=1\n",
                      "src_core 1 beyond the cluster's 1 cores");
    expect_chip_error(".engine dma\ndma.copy dtype=i8 dst=sram:0x40000 src=dram:0 shape=4 dstride=1 sstride=1\n",
                      "dst sram:0x40000 beyond the 262144 bytes of sram");
    expect_chip_error(".engine vec\nv.relu dtype=f32 dst=0x10000 src=0 shape=4 dstride=1 sstride=1\n",
                      "dst 0x10000 beyond the 65536 bytes of LMEM");
    expect_chip_error(".engine vec\nv.relu dtype=f32 dst=0x20 src=0 shape=4 dstride=1 sstride=1\n",
                      "c.s:2: core 0 vec insn 0: dst 0x20 is not 64-byte aligned");
    expect_chip_error(".engine mat\nmm dtype=i16 dst=0 src=0 src2=0 m=8 k=8 n=8 lda=8 ldb=8 ldc=8\n",
                      "c.s:2: core 0 mat insn 0: the matrix unit has no i16 mode");
    /* vector dtype classes: bitwise ops integer only, transcendentals float only */
    expect_chip_error(".engine vec\nv.xor dtype=f32 dst=0x80 src=0 src2=0x40 shape=4 dstride=1 sstride=1 s2stride=1\n",
                      "c.s:2: core 0 vec insn 0: v.xor does not accept dtype f32");
    expect_chip_error(".engine vec\nv.sin dtype=i16 dst=0x80 src=0 shape=4 dstride=1 sstride=1\n",
                      "c.s:2: core 0 vec insn 0: v.sin does not accept dtype i16");
    expect_chip_error(".engine vec\nv.and dtype=i8 dst=0x80 src=0 src2=0x40 shape=4 dstride=1 sstride=1 s2stride=1\n"
                      "v.erf dtype=bf16 dst=0x80 src=0 shape=4 dstride=1 sstride=1\n"
                      "v.rargmin dtype=f16 dst=0x80 src=0 shape=2,3 axis=3 last=1\n", NULL);
}

int main(void)
{
    RUN(disasm_asm_round_trip_every_op);
    RUN(example_line_and_defaults);
    RUN(instruction_errors_name_mnemonic_and_field);
    RUN(peer_operand_round_trip);
    RUN(program_directives_and_generators);
    RUN(random_generator_is_deterministic);
    RUN(half_precision_rounding);
    RUN(disasm_truncates_safely);
    RUN(program_errors_name_file_and_line);
    RUN(program_text_round_trip);
    RUN(binary_image_round_trip);
    RUN(binary_image_corruption_is_reported);
    RUN(program_checked_against_a_chip);
    return test_summary("test_asm");
}

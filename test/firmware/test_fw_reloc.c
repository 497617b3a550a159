/* test_fw_reloc.c - the firmware's raw-record relocation (fw_reloc.c)
 * agrees with the ISA's own encoder and decoder: for every opcode, a record
 * made by isa_encode and relocated by fw_reloc_insn decodes (isa_decode) to
 * the same instruction with only the DRAM operands moved by their region
 * base; non-DMA ops come back byte for byte.
 */
#include <stdio.h>
#include <string.h>
#include "firmware/fw.h"
#include "isa/isa.h"
#include "test/test.h"

static const uint64_t base[ABM_REGION_COUNT] = { 0x100000, 0x400000, 0x7fffc0 };
static const uint64_t size[ABM_REGION_COUNT] = { 1 << 20, 1 << 16, 4096 };

/* A valid instruction of op: every field set to something small and legal. */
static void sample_insn(int op, AtlInsn *in)
{
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op;
    in->layer = 7;
    in->wait = 2;
    in->signal = 3;
    in->dtype = ISA_I16;
    in->otype = ISA_I8;
    in->dst = 0x40;
    in->src = 0x80;
    in->src2 = 0xc0;
    in->src3 = 0x100;
    for (int d = 0; d < 4; d++) { in->shape[d] = (uint32_t)(d + 1); in->dst_stride[d] = 2 * (d + 1); in->src_stride[d] = 2; in->src2_stride[d] = 1; }
    in->m = in->k = in->n = 4;
    in->lda = in->ldb = in->ldc = 4;
    in->cin = in->ih = in->iw = in->cout = 4;
    in->kh = in->kw = in->sh = in->sw = in->dh = in->dw = 1;
    in->groups = 1;
    in->bar_count = 1;
    in->hi = 127;
    in->lo = -128;
}

TEST(every_op_round_trips)
{
    AtlErr e;
    char why[256];
    int dma_ops = 0;
    for (int op = 0; op < ISA_NUM_OPS; op++) {
        AtlInsn in, out;
        sample_insn(op, &in);
        uint8_t rec[64];
        memset(rec, 0, sizeof rec);
        if (isa_encode(&in, rec, &e)) { CHECKF(0, "%s: encode: %s", isa_ops[op].mnemonic, e.msg); continue; }
        REQUIRE(isa_decode(rec, &in, &e) == 0);     /* normalised: only the op's fields */
        uint8_t orig[64];
        memcpy(orig, rec, 64);
        int has_addr = 0;
        const AtlFormatInfo *f = &isa_formats[isa_ops[op].format];
        for (int i = 0; i < f->nfields; i++) has_addr |= isa_fields[f->fields[i].field].kind == ISA_K_ADDR;
        if (!has_addr) {
            CHECKF(fw_reloc_insn(rec, base, size, why, sizeof why) == 0, "%s: %s", isa_ops[op].mnemonic, why);
            CHECKF(memcmp(rec, orig, 64) == 0, "%s changed by relocation", isa_ops[op].mnemonic);
            continue;
        }
        dma_ops++;
        /* DRAM destination in io, source in weights (if the op has one) */
        in.dst_space = ISA_SPACE_DRAM;
        in.dst = ATL_RELOC_ADDR(ABM_REGION_IO, 0x100);
        in.src_space = ISA_SPACE_DRAM;
        in.src = ATL_RELOC_ADDR(ABM_REGION_WEIGHTS, 0x2000);
        int has_idx = isa_ops[op].format == ISA_FMT_DMA_GATHER;   /* and its index table in activations */
        /* a scatter's dst spans `limit` rows: shape[1] of them keeps the dst bounds below exact */
        if (has_idx) { in.src2_space = ISA_SPACE_DRAM; in.src2 = ATL_RELOC_ADDR(ABM_REGION_ACTIVATIONS, 0x40); in.limit = op == ISA_OP_DMA_SCATTER ? in.shape[1] : 3; }
        memset(rec, 0, 64);
        REQUIRE(isa_encode(&in, rec, &e) == 0);
        REQUIRE(isa_decode(rec, &in, &e) == 0);
        CHECKF(fw_reloc_insn(rec, base, size, why, sizeof why) == 0, "%s: %s", isa_ops[op].mnemonic, why);
        REQUIRE(isa_decode(rec, &out, &e) == 0);
        AtlInsn want = in;
        want.dst = base[ABM_REGION_IO] + 0x100;
        if (in.src_space == ISA_SPACE_DRAM && in.src == ATL_RELOC_ADDR(ABM_REGION_WEIGHTS, 0x2000))
            want.src = base[ABM_REGION_WEIGHTS] + 0x2000;
        if (has_idx) want.src2 = base[ABM_REGION_ACTIVATIONS] + 0x40;
        CHECKF(memcmp(&want, &out, sizeof want) == 0, "%s: relocated instruction differs in more than its DRAM operands",
               isa_ops[op].mnemonic);
        /* the same op with an SRAM destination keeps it */
        in.dst_space = ISA_SPACE_SRAM;
        in.dst = 0x300000000ull;
        memset(rec, 0, 64);
        REQUIRE(isa_encode(&in, rec, &e) == 0);
        REQUIRE(fw_reloc_insn(rec, base, size, why, sizeof why) == 0);
        REQUIRE(isa_decode(rec, &out, &e) == 0);
        CHECK_EQ_INT(out.dst, 0x300000000ull);
        /* an io access one byte too long is refused: shape 1,2,3,4 of i16 with
         * strides 2,4,6,8 bytes spans 0*2 + 1*4 + 2*6 + 3*8 + 2 = 42 bytes */
        in.dst_space = ISA_SPACE_DRAM;
        in.dst = ATL_RELOC_ADDR(ABM_REGION_IO, 4096 - 41);
        memset(rec, 0, 64);
        REQUIRE(isa_encode(&in, rec, &e) == 0);
        CHECKF(fw_reloc_insn(rec, base, size, why, sizeof why) == -1, "%s: overrun accepted", isa_ops[op].mnemonic);
        in.dst = ATL_RELOC_ADDR(ABM_REGION_IO, 4096 - 42);
        memset(rec, 0, 64);
        REQUIRE(isa_encode(&in, rec, &e) == 0);
        CHECKF(fw_reloc_insn(rec, base, size, why, sizeof why) == 0, "%s: exact fit refused: %s", isa_ops[op].mnemonic, why);
    }
    CHECK_EQ_INT(dma_ops, 4);   /* dma.copy, dma.fill, dma.gather and dma.scatter */
}

int main(void)
{
    RUN(every_op_round_trips);
    return test_summary("test_fw_reloc");
}

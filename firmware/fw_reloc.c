/* fw_reloc.c - relocation of DMA addresses in command streams.
 *
 * Convention (docs/firmware.md): in a model's command streams, a DMA
 * operand whose space is DRAM holds ATL_RELOC_ADDR(region, offset), i.e.
 * (region + 1) << 32 | offset, with region 0 weights, 1 activations, 2 io.
 * At load time the firmware, which chose the regions' DRAM bases, rewrites
 * it to base[region] + offset, after checking that every byte the strided
 * access can touch (shape, byte strides, element size) lies inside the
 * region (the indexed end of a dma.gather (source) or dma.scatter
 * (destination): all `limit` rows along d1; the idx table: one i32 per d1
 * position). SRAM and LMEM operands are left alone.
 *
 * The instruction layout comes from the ISA tables (isa/isa.h): fields are
 * packed in format order from bit ISA_HEADER_BITS, DIMS/STRIDES take four
 * elements, an ADDR field is followed by a 2-bit space code. This file
 * works on the raw 64-byte record (the encoder in isa/ uses stdio for its
 * messages, the firmware cannot link it).
 */
#include "firmware/fw.h"
#include "isa/isa.h"
#include "isa/layout.h"

/* Where each field of a format sits in the record. */
typedef struct Layout { int present; unsigned pos, bits; } Layout;

static void layout_of(int format, Layout lay[ISA_NUM_FIELDS])
{
    for (int i = 0; i < ISA_NUM_FIELDS; i++) lay[i].present = 0;
    const AtlFormatInfo *f = &isa_formats[format];
    int pos[ISA_MAX_FORMAT_FIELDS];
    isa_format_layout(f, pos);
    for (int i = 0; i < f->nfields; i++)
        lay[f->fields[i].field] = (Layout){ 1, (unsigned)pos[i], f->fields[i].bits };
}

static const char *const region_names[ABM_REGION_COUNT] = { "weights", "activations", "io" };

int fw_reloc_insn(uint8_t rec[64], const uint64_t base[ABM_REGION_COUNT], const uint64_t size[ABM_REGION_COUNT],
                  char *why, size_t cap)
{
    unsigned op = rec[0];
    if (op >= ISA_NUM_OPS) { fw_fmt(why, cap, "unknown opcode %u", op); return -1; }
    Layout lay[ISA_NUM_FIELDS];
    layout_of(isa_ops[op].format, lay);
    for (int id = 0; id < ISA_NUM_FIELDS; id++) {
        if (!lay[id].present || isa_fields[id].kind != ISA_K_ADDR) continue;
        const char *fname = isa_fields[id].name, *mn = isa_ops[op].mnemonic;
        unsigned apos = lay[id].pos, abits = lay[id].bits;
        uint64_t addr = isa_bits_get(rec, apos, abits), space = isa_bits_get(rec, apos + abits, ISA_SPACE_BITS);
        if (space != ISA_SPACE_DRAM) continue;
        uint64_t tag = addr >> ATL_RELOC_SHIFT, off = addr & (((uint64_t)1 << ATL_RELOC_SHIFT) - 1);
        if (tag < 1 || tag > ABM_REGION_COUNT) {
            fw_fmt(why, cap, "%s: %s=dram:0x%llx has no region tag (expected (region+1)<<%u | offset: "
                   "0x1_0000_0000 weights, 0x2_0000_0000 activations, 0x3_0000_0000 io)",
                   mn, fname, (unsigned long long)addr, ATL_RELOC_SHIFT);
            return -1;
        }
        unsigned region = (unsigned)tag - 1;
        /* Extent of the strided access: lowest and one past the highest byte.
         * An index table is one i32 per d1 position; the indexed end (a
         * gather's source, a scatter's destination) spans `limit` rows
         * along d1 (any of them may be named). */
        int stride_id = id == ISA_F_DST ? ISA_F_DSTRIDE : ISA_F_SSTRIDE;
        if (!lay[ISA_F_SHAPE].present || !lay[stride_id].present || !lay[ISA_F_DTYPE].present) {
            fw_fmt(why, cap, "%s: %s in DRAM without shape, strides and dtype", mn, fname);
            return -1;
        }
        int esize = isa_dtype_size((int)isa_bits_get(rec, lay[ISA_F_DTYPE].pos, lay[ISA_F_DTYPE].bits));
        int64_t lo = 0, hi = id == ISA_F_IDX ? 4 : esize;
        int indexed_end = op == ISA_OP_DMA_SCATTER ? ISA_F_DST : ISA_F_SRC;
        int empty = 0;
        for (unsigned d = 0; d < 4; d++) {
            uint64_t n = isa_bits_get(rec, lay[ISA_F_SHAPE].pos + d * lay[ISA_F_SHAPE].bits, lay[ISA_F_SHAPE].bits);
            unsigned sb = lay[stride_id].bits;
            int64_t s = isa_sext(isa_bits_get(rec, lay[stride_id].pos + d * sb, sb), sb);
            if (id == ISA_F_IDX) s = d == 1 ? 4 : 0;
            if (id == indexed_end && d == 1 && lay[ISA_F_LIMIT].present)
                n = isa_bits_get(rec, lay[ISA_F_LIMIT].pos, lay[ISA_F_LIMIT].bits);
            if (n == 0) { empty = 1; break; }
            int64_t span = (int64_t)(n - 1) * s;   /* |n-1| < 2^16, |s| < 2^31: no overflow */
            if (span < 0) lo += span; else hi += span;
        }
        if (empty) lo = hi = 0;
        if ((int64_t)off + lo < 0 || (uint64_t)((int64_t)off + hi) > size[region]) {
            fw_fmt(why, cap, "%s: %s=%s+0x%llx touches bytes [%lld, %lld) of the %s region, which has %llu bytes",
                   mn, fname, region_names[region], (unsigned long long)off, (long long)off + lo,
                   (long long)off + hi, region_names[region], (unsigned long long)size[region]);
            return -1;
        }
        uint64_t phys = base[region] + off;
        if (abits < 64 && (phys >> abits) != 0) {
            fw_fmt(why, cap, "%s: relocated %s 0x%llx does not fit %u bits", mn, fname, (unsigned long long)phys, abits);
            return -1;
        }
        isa_bits_put(rec, apos, abits, phys);
    }
    return 0;
}

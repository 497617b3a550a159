/* abm_program.c - a compiled variant as a simulator program, without firmware.
 *
 * Reads: a decoded .abm (AbmModel) and a variant index.
 * Does what the firmware's LOAD does, on the host: places the weights
 *   region at DRAM 0, activations and io after it (4 KiB aligned), decodes
 *   every stream and rewrites each region-tagged DRAM operand
 *   ((region+1)<<32 | offset, docs/firmware.md) to base + offset, checking
 *   it lies inside its region; the weight image becomes a data segment.
 * Guarantees: the program runs on the simulator exactly as the firmware
 *   would run it; tests write inputs at bases.base[ABM_REGION_IO] + the
 *   tensor's offset and read outputs the same way.
 * Why: lets the backend be tested end to end before the device model. */
#include <stdlib.h>
#include <string.h>
#include "isa/abm_program.h"
#include "isa/timing.h"
#include "isa/regs.h"
#include "isa/timing.h"

/* Region bases are aligned to tim_dram_region_align (a whole round of
 * DRAM channels, interleave x channels, at least 4 KiB; with the banked
 * model, a whole round of banks below the row field), the placement the
 * cost model assumes (compiler/cost/), so estimates and simulation see the
 * same channel and bank of every address; the firmware places them so too. */
static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static int reloc(uint64_t *addr, const AbmRegionBases *b, const uint64_t size[3], AtlErr *e)
{
    uint64_t tag = *addr >> ATL_RELOC_SHIFT, off = *addr & 0xffffffffu;
    if (tag < 1 || tag > 3) return atl_fail(e, "DRAM address 0x%llx has no region tag", (unsigned long long)*addr);
    if (off >= size[tag - 1] + 1) return atl_fail(e, "DRAM offset 0x%llx beyond region %llu (%llu bytes)",
                                                 (unsigned long long)off, (unsigned long long)(tag - 1),
                                                 (unsigned long long)size[tag - 1]);
    *addr = b->base[tag - 1] + off;
    return 0;
}

int abm_variant_program(const AbmModel *m, uint32_t variant, const AtlChip *chip, AtlProgram *p, AbmRegionBases *bases_out, AtlErr *e)
{
    int ncores = cfg_total_cores(chip);
    uint64_t al = tim_dram_region_align(chip);
    const AbmView *v = &m->view;
    if (variant >= v->n_variants) return atl_fail(e, "variant %u does not exist", variant);
    AbmVariant st = abm_variant(v, variant);
    if ((int)st.core_count > ncores) return atl_fail(e, "variant needs %u cores, the chip has %d", st.core_count, ncores);
    AbmRegionBases b;
    uint64_t size[3] = {m->weight_bytes, st.activation_bytes, st.io_bytes};
    b.base[ABM_REGION_WEIGHTS] = 0;
    b.base[ABM_REGION_ACTIVATIONS] = round_up(m->weight_bytes, al);
    b.base[ABM_REGION_IO] = b.base[ABM_REGION_ACTIVATIONS] + round_up(st.activation_bytes, al);
    if (prog_init(p, ncores, e)) return -1;
    for (uint32_t core = 0; core < st.core_count; core++)
        for (uint32_t eng = 0; eng < ABM_ENGINES; eng++) {
            AbmStream s = abm_stream(v, variant, core, eng);
            for (uint64_t i = 0; i + ISA_INSN_BYTES <= s.size; i += ISA_INSN_BYTES) {
                AtlInsn in;
                if (isa_decode(s.data + i, &in, e)) goto fail;
                int rc = 0;
                int dma = isa_ops[in.op].engine == ISA_ENGINE_DMA;
                if (dma && in.dst_space == ISA_SPACE_DRAM)
                    rc = reloc(&in.dst, &b, size, e);
                if (!rc && dma && in.op != ISA_OP_DMA_FILL && in.src_space == ISA_SPACE_DRAM)
                    rc = reloc(&in.src, &b, size, e);
                if (!rc && isa_ops[in.op].format == ISA_FMT_DMA_GATHER && in.src2_space == ISA_SPACE_DRAM)
                    rc = reloc(&in.src2, &b, size, e);
                if (rc) { atl_err_prefix(e, "core %u engine %u instruction %llu", core, eng, (unsigned long long)(i / ISA_INSN_BYTES)); goto fail; }
                if (prog_append(p, (int)core, (int)eng, &in, 0, e)) goto fail;
            }
        }
    if (m->weight_bytes && m->weights) {
        p->segs = calloc(1, sizeof *p->segs);
        if (!p->segs) { atl_fail(e, "out of memory"); goto fail; }
        p->nsegs = 1;
        strcpy(p->segs[0].name, "weights");
        p->segs[0].addr = 0;
        p->segs[0].size = m->weight_bytes;
        p->segs[0].bytes = malloc(m->weight_bytes);
        if (!p->segs[0].bytes) { atl_fail(e, "out of memory"); goto fail; }
        memcpy(p->segs[0].bytes, m->weights, m->weight_bytes);
    }
    if (bases_out) *bases_out = b;
    return 0;
fail:
    prog_free(p);
    return -1;
}

/* prog_check.c - static checks of a program against a chip config: what can
 * be known before running it. The program's cores exist, its DRAM data and
 * regions fit in DRAM, and every instruction uses semaphores the core has,
 * core masks and source cores inside the cluster, base addresses inside
 * their memory, LMEM operands of the matrix/vector units at the configured
 * alignment, matrix dtypes the unit supports, and vector dtypes the op
 * accepts (float-only transcendentals, integer-only bitwise ops). Extents of strided
 * accesses depend on op semantics and are checked by the simulator at run
 * time. Loops over the format table, no per-opcode code.
 */
#include <inttypes.h>
#include <stdio.h>
#include "isa/config.h"
#include "isa/program.h"
#include "isa/field_access.h"
#include "isa/numerics.h"

/* Size of the memory an ADDR field's space names. */
static uint64_t space_bytes(const AtlChip *c, int space)
{
    if (space == ISA_SPACE_DRAM) return (uint64_t)c->dram_bytes;
    if (space == ISA_SPACE_SRAM) return (uint64_t)c->sram_bytes;
    return (uint64_t)c->lmem_bytes;
}

static int insn_fail(const AtlProgram *p, int core, int eng, int idx, AtlErr *e, const char *what)
{
    const AtlStream *s = &p->streams[core * ISA_NUM_ENGINES + eng];
    char dis[512];
    isa_disasm(&s->insns[idx], dis, sizeof dis);
    if (s->src_line && s->src_line[idx] > 0)
        return atl_fail(e, "%s:%d: core %d %s insn %d: %s (%s)", p->source, s->src_line[idx], core, isa_engine_name(eng), idx, what, dis);
    return atl_fail(e, "%s: core %d %s insn %d: %s (%s)", p->source, core, isa_engine_name(eng), idx, what, dis);
}

static int check_insn(const AtlProgram *p, const AtlChip *c, int core, int eng, int idx, AtlErr *e)
{
    const AtlInsn *in = &p->streams[core * ISA_NUM_ENGINES + eng].insns[idx];
    const AtlOpInfo *op = &isa_ops[in->op];
    const AtlFormatInfo *fmt = &isa_formats[op->format];
    char what[256];
    if (in->wait > c->semaphores || in->signal > c->semaphores) {
        snprintf(what, sizeof what, "semaphore %d beyond the core's %d", (in->wait > c->semaphores ? in->wait : in->signal) - 1,
                 c->semaphores);
        return insn_fail(p, core, eng, idx, e, what);
    }
    if (op->engine == ISA_ENGINE_MAT && cfg_peak_ops_per_s(c, in->dtype) <= 0) {
        snprintf(what, sizeof what, "the matrix unit has no %s mode", isa_dtype_name(in->dtype));
        return insn_fail(p, core, eng, idx, e, what);
    }
    if (op->engine == ISA_ENGINE_VEC && !num_op_dtype_ok(in->op, in->dtype)) {
        snprintf(what, sizeof what, "%s does not accept dtype %s", op->mnemonic, isa_dtype_name(in->dtype));
        return insn_fail(p, core, eng, idx, e, what);
    }
    for (int i = 0; i < fmt->nfields; i++) {
        AtlFieldId id = fmt->fields[i].field;
        const AtlFieldInfo *f = &isa_fields[id];
        uint64_t v = isa_field_get(in, f, 0);
        if (id == ISA_F_MASK && c->cores_per_cluster < 32 && (v >> c->cores_per_cluster)) {
            snprintf(what, sizeof what, "mask 0x%" PRIx64 " names cores beyond the cluster's %d", v, c->cores_per_cluster);
            return insn_fail(p, core, eng, idx, e, what);
        }
        if (id == ISA_F_SRC_CORE && v >= (uint64_t)c->cores_per_cluster) {
            snprintf(what, sizeof what, "src_core %" PRIu64 " beyond the cluster's %d cores", v, c->cores_per_cluster);
            return insn_fail(p, core, eng, idx, e, what);
        }
        if (f->kind == ISA_K_ADDR && isa_space_is_peer(*isa_field_space((AtlInsn *)in, f))) {
            /* another cluster's SRAM: a chip with cluster links, a cluster it has */
            if (!c->noc_cluster_links) {
                snprintf(what, sizeof what, "%s names cluster %d's SRAM, but chip %s has no cluster links ([noc] cluster_links = 0)",
                         f->name, isa_peer_cluster(v), c->name);
                return insn_fail(p, core, eng, idx, e, what);
            }
            if (isa_peer_cluster(v) >= c->clusters || isa_peer_offset(v) >= (uint64_t)c->sram_bytes) {
                snprintf(what, sizeof what, "%s peer@%d:0x%" PRIx64 " beyond chip %s's %d clusters of %d bytes of SRAM", f->name,
                         isa_peer_cluster(v), isa_peer_offset(v), c->name, c->clusters, c->sram_bytes);
                return insn_fail(p, core, eng, idx, e, what);
            }
        } else if (f->kind == ISA_K_ADDR) {
            int sp = *isa_field_space((AtlInsn *)in, f);
            if (v >= space_bytes(c, sp)) {
                snprintf(what, sizeof what, "%s %s:0x%" PRIx64 " beyond the %" PRIu64 " bytes of %s", f->name, isa_space_name(sp), v,
                         space_bytes(c, sp), isa_space_name(sp));
                return insn_fail(p, core, eng, idx, e, what);
            }
        }
        if (f->kind == ISA_K_LMEM) {
            if (v >= (uint64_t)c->lmem_bytes) {
                snprintf(what, sizeof what, "%s 0x%" PRIx64 " beyond the %d bytes of LMEM", f->name, v, c->lmem_bytes);
                return insn_fail(p, core, eng, idx, e, what);
            }
            if (v % (uint64_t)c->lmem_alignment) {
                snprintf(what, sizeof what, "%s 0x%" PRIx64 " is not %d-byte aligned", f->name, v, c->lmem_alignment);
                return insn_fail(p, core, eng, idx, e, what);
            }
        }
    }
    return 0;
}

int prog_check_chip(const AtlProgram *p, const AtlChip *c, AtlErr *e)
{
    if (p->ncores > cfg_total_cores(c))
        return atl_fail(e, "%s: program uses %d cores, chip %s has %d", p->source, p->ncores, c->name, cfg_total_cores(c));
    for (int i = 0; i < p->nsegs; i++)
        if (p->segs[i].addr + p->segs[i].size > (uint64_t)c->dram_bytes)
            return atl_fail(e, "%s: data %s ends at 0x%" PRIx64 ", beyond chip %s's %d bytes of DRAM", p->source, p->segs[i].name,
                            p->segs[i].addr + p->segs[i].size, c->name, c->dram_bytes);
    for (int i = 0; i < p->nregions; i++)
        if (p->regions[i].addr + prog_region_bytes(&p->regions[i]) > (uint64_t)c->dram_bytes)
            return atl_fail(e, "%s: region %s ends at 0x%" PRIx64 ", beyond chip %s's %d bytes of DRAM", p->source, p->regions[i].name,
                            p->regions[i].addr + prog_region_bytes(&p->regions[i]), c->name, c->dram_bytes);
    for (int core = 0; core < p->ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++)
            for (int i = 0; i < p->streams[core * ISA_NUM_ENGINES + eng].count; i++)
                if (check_insn(p, c, core, eng, i, e)) return -1;
    return 0;
}

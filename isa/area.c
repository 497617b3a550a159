/* area.c - the chip area model (see area.h for the formulas). */
#include <string.h>
#include "isa/area.h"

static const char *const part_names[AREA_PARTS] = {"mac_i8", "mac_fp", "vector", "lmem", "sram", "noc", "dram_phy"};

const char *area_part_name(int part)
{
    return part >= 0 && part < AREA_PARTS ? part_names[part] : "?";
}

int cfg_area(const AtlChip *c, AtlArea *a)
{
    memset(a, 0, sizeof *a);
    if (!c->has_area) return 0;
    const double mib = 1024.0 * 1024.0, cores = cfg_total_cores(c), macs = (double)c->mm_rows * c->mm_cols;
    a->part[AREA_MAC_I8] = cores * macs * c->a_mac_i8;
    a->part[AREA_MAC_FP] = cores * macs / (c->mm_rate_f16 > 0 ? c->mm_rate_f16 : 1) * c->a_mac_fp;
    a->part[AREA_VECTOR] = cores * c->vec_lanes * c->a_vec_lane;
    a->part[AREA_LMEM] = cores * (c->lmem_bytes / mib) * c->a_lmem_mib;
    a->part[AREA_SRAM] = c->clusters * (c->sram_bytes / mib) * c->a_sram_mib;
    a->part[AREA_NOC] = c->clusters * c->a_noc_cluster;
    a->part[AREA_DRAM_PHY] = c->dram_channels * c->a_dram_phy;
    for (int i = 0; i < AREA_PARTS; i++) a->total += a->part[i];
    return 1;
}

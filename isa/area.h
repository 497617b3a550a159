/* area.h - the chip's silicon area from the [area] section of its config:
 * mm^2 per MAC, per vector lane, per MiB of LMEM and SRAM, per cluster's
 * NoC router and per DRAM channel's PHY, multiplied out over the chip's
 * structure. Area feeds studies (images/s per mm^2), never timing, and is
 * not part of the chip fingerprint.
 *
 *   matrix (int8)  cores x rows x cols x mac_i8_mm2
 *   matrix (fp)    cores x rows x cols / f16_rate x mac_fp_mm2 (a half-rate
 *                  fp16 mode is modelled as half as many fp MACs, each used
 *                  for two cycles per pass step; fp32 reuses them)
 *   vector         cores x lanes x vec_lane_mm2
 *   lmem           cores x lmem MiB x lmem_mm2_per_mib
 *   sram           clusters x sram MiB x sram_mm2_per_mib
 *   noc            clusters x noc_mm2_per_cluster
 *   dram_phy       channels x dram_phy_mm2_per_channel
 */
#ifndef ATOLL_ISA_AREA_H
#define ATOLL_ISA_AREA_H
#include "isa/config.h"

typedef enum {
    AREA_MAC_I8, AREA_MAC_FP, AREA_VECTOR, AREA_LMEM, AREA_SRAM, AREA_NOC, AREA_DRAM_PHY, AREA_PARTS
} AtlAreaPart;

typedef struct AtlArea {
    double part[AREA_PARTS];   /* mm^2 per component */
    double total;              /* mm^2 */
} AtlArea;

/* Short name of a component ("mac_i8", "mac_fp", "vector", "lmem", "sram",
 * "noc", "dram_phy"), as used in the stats JSON and the sweep CSV. */
const char *area_part_name(int part);
/* Fills a from the chip's [area] figures. Returns 1 when the chip has an
 * [area] section, 0 (and an all-zero a) when it has none. */
int cfg_area(const AtlChip *c, AtlArea *a);
#endif

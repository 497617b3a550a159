/* host_cost.c - what simulating a chip costs the host in memory, from the
 * config alone (`atoll config check` prints it): the simulated memories,
 * which take RAM only where a run touches them when they are large
 * (util/zmem.h), and the state allocated up front for every core and
 * engine. It mirrors the allocations of sim_create. */
#include "sim/sim_int.h"
#include "util/zmem.h"
#include "isa/timing.h"

static void add_block(AtlSimHostCost *c, uint64_t bytes, uint64_t count)
{
    if (bytes < ATL_ZMEM_LAZY_MIN) c->upfront += bytes * count;   /* calloc'd and zeroed on every load */
    else c->lazy += bytes * count;
}

void sim_host_cost(const AtlChip *chip, AtlSimHostCost *c)
{
    uint64_t cores = (uint64_t)chip->clusters * (uint64_t)chip->cores_per_cluster;
    uint64_t links = chip->noc_cluster_links ? (uint64_t)chip->clusters * TIM_NOC_DIRS : 0;
    uint64_t engines = cores * ISA_NUM_ENGINES, nps = (uint64_t)chip->dram_channels + 3 * (uint64_t)chip->clusters + cores + links;
    uint64_t maxuse = 2 * (uint64_t)chip->dram_channels + (uint64_t)chip->cores_per_cluster + 4 +
                      (chip->noc_cluster_links ? TIM_NOC_MAX_HOPS : 0);
    c->lazy = c->upfront = 0;
    add_block(c, (uint64_t)chip->dram_bytes, 1);
    add_block(c, (uint64_t)chip->sram_bytes + 1, (uint64_t)chip->clusters);
    add_block(c, (uint64_t)chip->lmem_bytes, cores);
    c->upfront += sizeof(AtlSim) + cores * sizeof(SimCore) + engines * (sizeof(SimEngine) + sizeof(AtlEngineStats)) +
                  cores * (uint64_t)chip->lmem_banks * sizeof(SimServer) + nps * (sizeof(SimPs) + 2 * cores * sizeof(SimPsJob)) +
                  engines * maxuse * sizeof(SimUse) + ((uint64_t)chip->clusters + 1) * 256 * sizeof(SimBarrier) +
                  (uint64_t)chip->dram_channels * 64;
}

size_t sim_insn_host_bytes(void) { return sizeof(SimPre) + sizeof(AtlInsn) + sizeof(SimUse); }

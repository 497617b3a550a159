/* zmem.h - zero-filled memory that costs host RAM only where it is touched.
 *
 * The simulator's memories (DRAM, every cluster's SRAM, every core's LMEM)
 * can add up to far more than a program uses: a chip of 16 cores with 256 MiB
 * of LMEM each is 4 GiB. Large blocks are anonymous mappings, so a page
 * takes memory only once written; zeroing one again (a new simulation run)
 * replaces its pages with fresh zero pages instead of writing every byte.
 * Small blocks are plain calloc'd memory (a system call and the page
 * faults cost more than a memset); from 256 KiB up, mapping wins: chip
 * conformance on a1 (16 x 512 KiB of LMEM zeroed per load) took 0.9 s of
 * CPU with calloc'd LMEM and 0.55 s with mapped LMEM.
 *
 * Ownership: atl_zmem_alloc allocates, atl_zmem_free releases (with the same
 * size).
 */
#ifndef ATOLL_UTIL_ZMEM_H
#define ATOLL_UTIL_ZMEM_H
#include <stddef.h>

/* Blocks from this size up are mapped lazily. */
#define ATL_ZMEM_LAZY_MIN ((size_t)256 << 10)

void *atl_zmem_alloc(size_t size);          /* NULL when out of memory or address space */
void atl_zmem_zero(void *p, size_t size);   /* all zeros again; touched pages released */
void atl_zmem_free(void *p, size_t size);
#endif

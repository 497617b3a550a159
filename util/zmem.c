/* zmem.c - lazily committed zero-filled memory (see zmem.h): anonymous
 * private mappings without swap reservation for large blocks, calloc for
 * small ones. */
#include "util/zmem.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

static const int lazy_flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

void *atl_zmem_alloc(size_t size)
{
    if (size < ATL_ZMEM_LAZY_MIN) return calloc(1, size ? size : 1);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, lazy_flags, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void atl_zmem_zero(void *p, size_t size)
{
    if (!p) return;
    if (size < ATL_ZMEM_LAZY_MIN) { memset(p, 0, size); return; }
    /* a fixed mapping over the old one: every page is a fresh zero page */
    if (mmap(p, size, PROT_READ | PROT_WRITE, lazy_flags | MAP_FIXED, -1, 0) == MAP_FAILED) memset(p, 0, size);
}

void atl_zmem_free(void *p, size_t size)
{
    if (!p) return;
    if (size < ATL_ZMEM_LAZY_MIN) free(p);
    else munmap(p, size);
}

/* fw_heap.c - the firmware's allocator: first fit over the one memory
 * region the control processor is given (no libc malloc in firmware).
 *
 * The region is a sequence of blocks, each starting with a 16-byte header
 * (block size including the header, and a used flag), so walking from the
 * start visits every block. Allocation takes the first free block that is
 * large enough, merging runs of free blocks on the way, and splits off the
 * rest when it can hold another block. Freeing marks the block free and
 * merges it with the free block after it. Payloads are 16-byte aligned.
 */
#include "firmware/fw.h"

#define HDR 16u
#define ALIGN 16u

typedef struct Hdr { uint64_t size; uint64_t used; } Hdr;

static Hdr *at(const FwHeap *h, size_t off) { return (Hdr *)(void *)(h->base + off); }

int fw_heap_init(FwHeap *h, void *mem, size_t size)
{
    uintptr_t p = (uintptr_t)mem, a = (p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    if (!mem || size < (a - p) + 2 * HDR) return -1;
    size -= (size_t)(a - p);
    size &= ~(size_t)(ALIGN - 1);
    h->base = (uint8_t *)a;
    h->size = size;
    h->used = h->peak = 0;
    *at(h, 0) = (Hdr){ size, 0 };
    return 0;
}

/* Merges the free blocks following the free block at off into it. */
static void merge_after(FwHeap *h, size_t off)
{
    Hdr *b = at(h, off);
    while (off + b->size < h->size) {
        Hdr *n = at(h, off + b->size);
        if (n->used) break;
        b->size += n->size;
    }
}

void *fw_heap_alloc(FwHeap *h, size_t size)
{
    if (!h->base || size > h->size) return NULL;
    size_t need = ((size + ALIGN - 1) & ~(size_t)(ALIGN - 1)) + HDR;
    for (size_t off = 0; off < h->size; off += at(h, off)->size) {
        Hdr *b = at(h, off);
        if (b->used) continue;
        merge_after(h, off);
        if (b->size < need) continue;
        if (b->size - need >= 2 * HDR) {
            *at(h, off + need) = (Hdr){ b->size - need, 0 };
            b->size = need;
        }
        b->used = 1;
        h->used += b->size;
        if (h->used > h->peak) h->peak = h->used;
        return h->base + off + HDR;
    }
    return NULL;
}

void fw_heap_free(FwHeap *h, void *p)
{
    if (!p) return;
    size_t off = (size_t)((uint8_t *)p - h->base) - HDR;
    Hdr *b = at(h, off);
    b->used = 0;
    h->used -= b->size;
    merge_after(h, off);
}

size_t fw_heap_largest_free(const FwHeap *h)
{
    size_t best = 0, run = 0;
    for (size_t off = 0; off < h->size; off += at(h, off)->size) {
        const Hdr *b = at(h, off);
        if (b->used) { run = 0; continue; }
        run += b->size;
        if (run - HDR > best) best = run - HDR;
    }
    return best;
}

# dram_sem.s - dram.s ordered by a semaphore instead of a barrier: after its
# store, core 0's DMA copies a 64-byte flag into core 1's LMEM (mask=0x2),
# which signals semaphore 0 of core 1; core 1's DMA waits on it (a nop)
# before its load. Without the `; ORDER` lines: the race of dram.s.
.zero t dram:0x10000 4096
.cores 2
.core 0
.engine dma
    dma.copy dtype=i8 dst=dram:t src=lmem:0x0 src_core=0 shape=4096 dstride=1 sstride=1 layer=1
    dma.copy dtype=i8 dst=lmem:0x8000 src=lmem:0x0 src_core=0 mask=0x2 shape=64 dstride=1 sstride=1 signal=0 layer=1 ; ORDER
    end
.core 1
.engine dma
    nop wait=0 ; ORDER
    dma.copy dtype=i8 dst=lmem:0x0 src=dram:t shape=4096 dstride=1 sstride=1 layer=2
    end

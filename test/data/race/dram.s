# dram.s - core 0's DMA stores 4 KiB to the DRAM buffer t; core 1's DMA
# loads it. A chip barrier (the `; ORDER` lines) puts the load after the
# store; without it both start at cycle 0 and core 1's load reads bytes
# core 0's store is still writing: a data race in DRAM.
.zero t dram:0x10000 4096
.cores 2
.core 0
.engine dma
    dma.copy dtype=i8 dst=dram:t src=lmem:0x0 src_core=0 shape=4096 dstride=1 sstride=1 layer=1
    barrier scope=1 id=0 count=2 ; ORDER
    end
.core 1
.engine dma
    barrier scope=1 id=0 count=2 ; ORDER
    dma.copy dtype=i8 dst=lmem:0x0 src=dram:t shape=4096 dstride=1 sstride=1 layer=2
    end

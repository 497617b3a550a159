# sram.s - dram.s in cluster 0's SRAM: core 0 stores 4 KiB to sram:0x0, core
# 1 loads it, ordered by a cluster barrier (the `; ORDER` lines). Without
# it core 1's load reads SRAM bytes core 0's store is still writing.
.cores 2
.core 0
.engine dma
    dma.copy dtype=i8 dst=sram:0x0 src=lmem:0x0 src_core=0 shape=4096 dstride=1 sstride=1 layer=1
    barrier scope=0 id=0 count=2 ; ORDER
    end
.core 1
.engine dma
    barrier scope=0 id=0 count=2 ; ORDER
    dma.copy dtype=i8 dst=lmem:0x0 src=sram:0x0 shape=4096 dstride=1 sstride=1 layer=2
    end

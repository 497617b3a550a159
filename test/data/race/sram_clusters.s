# sram_clusters.s - core 0 (cluster 0) stores to sram:0x0 while core 4
# (cluster 1) loads from sram:0x0 at the same time: each cluster has its own
# SRAM, so they touch different memories and nothing needs ordering.
.cores 5
.core 0
.engine dma
    dma.copy dtype=i8 dst=sram:0x0 src=lmem:0x0 src_core=0 shape=4096 dstride=1 sstride=1 layer=1
    end
.core 4
.engine dma
    dma.copy dtype=i8 dst=lmem:0x0 src=sram:0x0 shape=4096 dstride=1 sstride=1 layer=2
    end

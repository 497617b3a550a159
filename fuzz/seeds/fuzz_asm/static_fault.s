# issue 15 item 13: instruction 0 fails its static check, the rest are never planned
.cores 1
.core 0
.engine dma
    dma.copy dtype=i8 dst=dram:0x7fffffff src=dram:0 shape=64 dstride=1 sstride=1
    dma.copy dtype=i8 dst=dram:0x100 src=dram:0 shape=64 dstride=1 sstride=1
    end

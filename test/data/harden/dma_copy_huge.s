# issue 15: one transfer of 65535^4 elements with zero strides
.cores 1
.core 0
.engine dma
    dma.copy dtype=i8 dst=dram:0 src=dram:0x100 shape=65535,65535,65535,65535 dstride=0,0,0,0 sstride=0,0,0,0
    end

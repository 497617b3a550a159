# issue 15: one transfer of 65535^4 elements with zero strides
.cores 1
.core 0
.engine dma
    dma.fill dtype=i8 dst=dram:0 shape=65535,65535,65535,65535 dstride=0,0,0,0 value=0
    end

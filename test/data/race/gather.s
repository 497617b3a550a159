# gather.s - core 0's DMA stores an index table (4 i32) to DRAM; core 1's
# dma.gather reads it (idx=dram:ix) to pick rows of a table. A chip barrier
# (the `; ORDER` lines) orders them; without it the gather's index read
# overlaps the store: a data race on the index table.
.data tab dram:0x0 i8 random 2 256
.zero ix dram:0x1000 16
.cores 2
.core 0
.engine dma
    dma.fill dtype=i32 dst=lmem:0x0 shape=4 dstride=4 value=1 layer=1
    dma.copy dtype=i32 dst=dram:ix src=lmem:0x0 src_core=0 shape=4 dstride=4 sstride=4 layer=1
    barrier scope=1 id=0 count=2 ; ORDER
    end
.core 1
.engine dma
    barrier scope=1 id=0 count=2 ; ORDER
    dma.gather dtype=i8 dst=lmem:0x0 src=dram:tab idx=dram:ix shape=1,4,1,64 dstride=0,64,0,1 sstride=0,64,0,1 limit=4 layer=2
    end

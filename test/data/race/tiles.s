# tiles.s - cores 0 and 1 store two column tiles of one 64 x 32 i32 matrix
# m (row stride 128 bytes) at the same time: columns [0, 16) and [C1, C1 + 16).
# Their bounding byte ranges overlap but, with C1 = 16, no byte is shared
# (every row holds both tiles side by side), so there is no race; race.sh
# also runs it with C1 = 12, where the tiles share 4 columns: a race.
.equ C1 16
.zero m dram:0x10000 8192
.cores 2
.core 0
.engine dma
    dma.copy dtype=i32 dst=dram:m src=lmem:0x0 src_core=0 shape=64,16 dstride=128,4 sstride=64,4 layer=1
    end
.core 1
.engine dma
    dma.copy dtype=i32 dst=dram:m+C1*4 src=lmem:0x0 src_core=1 shape=64,16 dstride=128,4 sstride=64,4 layer=1
    end

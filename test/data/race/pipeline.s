# pipeline.s - a two-stage pipeline over two clusters through the DRAM
# buffer t (4 chunks of 1 KiB). Stage 1 (core 0, cluster 0) loads each
# chunk of x, applies ReLU and stores it to t, chunk after chunk; stage 2
# (core 4, cluster 1) waits at a chip barrier (the `; ORDER` lines) until
# all of t is written, then loads it whole, applies ReLU and stores z.
# Without the barrier stage 2's load of t starts at once and is still
# reading when stage 1 stores its first chunk: a data race in DRAM between
# the two clusters, reported at that store.
.data x dram:0x0 i8 random 1 4096
.zero t dram:0x10000 4096
.zero z dram:0x20000 4096
.cores 5
.core 0
.engine dma
    dma.copy dtype=i8 dst=lmem:0x0 src=dram:x+0 shape=1024 dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=dram:t+0 src=lmem:0x1000 src_core=0 shape=1024 dstride=1 sstride=1 wait=1 layer=1
    dma.copy dtype=i8 dst=lmem:0x400 src=dram:x+1024 shape=1024 dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=dram:t+1024 src=lmem:0x1400 src_core=0 shape=1024 dstride=1 sstride=1 wait=1 layer=1
    dma.copy dtype=i8 dst=lmem:0x800 src=dram:x+2048 shape=1024 dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=dram:t+2048 src=lmem:0x1800 src_core=0 shape=1024 dstride=1 sstride=1 wait=1 layer=1
    dma.copy dtype=i8 dst=lmem:0xc00 src=dram:x+3072 shape=1024 dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=dram:t+3072 src=lmem:0x1c00 src_core=0 shape=1024 dstride=1 sstride=1 wait=1 layer=1
    barrier scope=1 id=0 count=2 ; ORDER
    end
.engine vec
    v.relu dtype=i8 dst=0x1000 src=0x0 shape=1024 dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x1400 src=0x400 shape=1024 dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x1800 src=0x800 shape=1024 dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x1c00 src=0xc00 shape=1024 dstride=1 sstride=1 wait=0 signal=1 layer=1
    end
.core 4
.engine dma
    barrier scope=1 id=0 count=2 ; ORDER
    dma.copy dtype=i8 dst=lmem:0x0 src=dram:t shape=4096 dstride=1 sstride=1 signal=0 layer=2
    dma.copy dtype=i8 dst=dram:z src=lmem:0x1000 src_core=0 shape=4096 dstride=1 sstride=1 wait=1 layer=2
    end
.engine vec
    v.relu dtype=i8 dst=0x1000 src=0x0 shape=4096 dstride=1 sstride=1 wait=0 signal=1 layer=2
    end

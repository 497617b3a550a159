# noc_pipeline.s - a two-stage pipeline over two clusters of
# configs/a1-noc.ini whose boundary goes over the NoC into the consumer's
# SRAM, double buffered (chip a1-noc: clusters joined by links).
# Stage 1 (cluster 0) applies ReLU to each 4 KiB chunk k of x on two cores,
# core 0 the first 1 KiB and core 1 the other 3 KiB, and each copies its
# part into slot k % 2 of cluster 1's SRAM (dst=peer@1:...), signalling
# semaphore 3 of core 4 (mask=1: core 0 of cluster 1) once it has landed.
# Stage 2 (core 4, cluster 1) waits for both parts (two waits on semaphore
# 3), loads the slot, hands the slot back with a 64-byte credit copy into
# cluster 0's SRAM that signals semaphore 2 of cores 0 and 1 (mask=3),
# applies ReLU and stores z. The producers wait for that credit before they
# reuse a slot (chunks 2 and 3). With the `; ORDER` lines deleted stage 2
# waits for one part only: it loads a slot while core 1 is still writing
# its part there over the NoC, a data race in cluster 1's SRAM. With the
# `; CREDIT` lines deleted the producers overwrite slot 1 with chunk 3
# while stage 2 is still loading chunk 1 from it: the same race, the other
# way round.
.equ N 16384
.equ CH 4096
.equ A 1024                ; core 0's part of a chunk, core 1 has CH - A
.equ SLOT 0x0              ; cluster 1's SRAM: slot k % 2 at SLOT + (k % 2) * CH
.equ CREDIT 0x10000        ; cluster 0's SRAM: where credits land (their bytes are not read)
.data x dram:0x0 i8 random 7 N 0 100
.zero z dram:0x20000 N
.expect z_ref dram:0x20000 i8 shape=N random 7 N 0 100
.cores 5
.core 0
.engine dma
    dma.copy dtype=i8 dst=lmem:0*CH src=dram:x+0*CH shape=A dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=peer@1:SLOT+0*CH src=lmem:0x8000+0*CH src_core=0 mask=1 shape=A dstride=1 sstride=1 wait=1 signal=3 layer=1
    dma.copy dtype=i8 dst=lmem:1*CH src=dram:x+1*CH shape=A dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=peer@1:SLOT+1*CH src=lmem:0x8000+1*CH src_core=0 mask=1 shape=A dstride=1 sstride=1 wait=1 signal=3 layer=1
    dma.copy dtype=i8 dst=lmem:2*CH src=dram:x+2*CH shape=A dstride=1 sstride=1 signal=0 layer=1
    nop wait=2                ; CREDIT: slot 0 is free again
    dma.copy dtype=i8 dst=peer@1:SLOT+0*CH src=lmem:0x8000+2*CH src_core=0 mask=1 shape=A dstride=1 sstride=1 wait=1 signal=3 layer=1
    dma.copy dtype=i8 dst=lmem:3*CH src=dram:x+3*CH shape=A dstride=1 sstride=1 signal=0 layer=1
    nop wait=2                ; CREDIT: slot 1 is free again
    dma.copy dtype=i8 dst=peer@1:SLOT+1*CH src=lmem:0x8000+3*CH src_core=0 mask=1 shape=A dstride=1 sstride=1 wait=1 signal=3 layer=1
    end
.engine vec
    v.relu dtype=i8 dst=0x8000+0*CH src=0*CH shape=A dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x8000+1*CH src=1*CH shape=A dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x8000+2*CH src=2*CH shape=A dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x8000+3*CH src=3*CH shape=A dstride=1 sstride=1 wait=0 signal=1 layer=1
    end
.core 1
.engine dma
    dma.copy dtype=i8 dst=lmem:0*CH src=dram:x+0*CH+A shape=CH-A dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=peer@1:SLOT+0*CH+A src=lmem:0x8000+0*CH src_core=1 mask=1 shape=CH-A dstride=1 sstride=1 wait=1 signal=3 layer=1
    dma.copy dtype=i8 dst=lmem:1*CH src=dram:x+1*CH+A shape=CH-A dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=peer@1:SLOT+1*CH+A src=lmem:0x8000+1*CH src_core=1 mask=1 shape=CH-A dstride=1 sstride=1 wait=1 signal=3 layer=1
    dma.copy dtype=i8 dst=lmem:2*CH src=dram:x+2*CH+A shape=CH-A dstride=1 sstride=1 signal=0 layer=1
    nop wait=2                ; CREDIT: slot 0 is free again
    dma.copy dtype=i8 dst=peer@1:SLOT+0*CH+A src=lmem:0x8000+2*CH src_core=1 mask=1 shape=CH-A dstride=1 sstride=1 wait=1 signal=3 layer=1
    dma.copy dtype=i8 dst=lmem:3*CH src=dram:x+3*CH+A shape=CH-A dstride=1 sstride=1 signal=0 layer=1
    nop wait=2                ; CREDIT: slot 1 is free again
    dma.copy dtype=i8 dst=peer@1:SLOT+1*CH+A src=lmem:0x8000+3*CH src_core=1 mask=1 shape=CH-A dstride=1 sstride=1 wait=1 signal=3 layer=1
    end
.engine vec
    v.relu dtype=i8 dst=0x8000+0*CH src=0*CH shape=CH-A dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x8000+1*CH src=1*CH shape=CH-A dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x8000+2*CH src=2*CH shape=CH-A dstride=1 sstride=1 wait=0 signal=1 layer=1
    v.relu dtype=i8 dst=0x8000+3*CH src=3*CH shape=CH-A dstride=1 sstride=1 wait=0 signal=1 layer=1
    end
.core 4
.engine dma
    nop wait=3                ; chunk 0: one part landed
    nop wait=3 ; ORDER
    dma.copy dtype=i8 dst=lmem:0*CH src=sram:SLOT+0*CH shape=CH dstride=1 sstride=1 signal=0 layer=2
    dma.copy dtype=i8 dst=peer@0:CREDIT src=lmem:0*CH shape=64 dstride=1 sstride=1 mask=3 signal=2 layer=2
    dma.copy dtype=i8 dst=dram:z+0*CH src=lmem:0x8000+0*CH src_core=0 shape=CH dstride=1 sstride=1 wait=1 layer=2
    nop wait=3                ; chunk 1: one part landed
    nop wait=3 ; ORDER
    dma.copy dtype=i8 dst=lmem:1*CH src=sram:SLOT+1*CH shape=CH dstride=1 sstride=1 signal=0 layer=2
    dma.copy dtype=i8 dst=peer@0:CREDIT src=lmem:1*CH shape=64 dstride=1 sstride=1 mask=3 signal=2 layer=2
    dma.copy dtype=i8 dst=dram:z+1*CH src=lmem:0x8000+1*CH src_core=0 shape=CH dstride=1 sstride=1 wait=1 layer=2
    nop wait=3                ; chunk 2: one part landed
    nop wait=3 ; ORDER
    dma.copy dtype=i8 dst=lmem:2*CH src=sram:SLOT+0*CH shape=CH dstride=1 sstride=1 signal=0 layer=2
    dma.copy dtype=i8 dst=dram:z+2*CH src=lmem:0x8000+2*CH src_core=0 shape=CH dstride=1 sstride=1 wait=1 layer=2
    nop wait=3                ; chunk 3: one part landed
    nop wait=3 ; ORDER
    dma.copy dtype=i8 dst=lmem:3*CH src=sram:SLOT+1*CH shape=CH dstride=1 sstride=1 signal=0 layer=2
    dma.copy dtype=i8 dst=dram:z+3*CH src=lmem:0x8000+3*CH src_core=0 shape=CH dstride=1 sstride=1 wait=1 layer=2
    end
.engine vec
    v.relu dtype=i8 dst=0x8000+0*CH src=0*CH shape=CH dstride=1 sstride=1 wait=0 signal=1 layer=2
    v.relu dtype=i8 dst=0x8000+1*CH src=1*CH shape=CH dstride=1 sstride=1 wait=0 signal=1 layer=2
    v.relu dtype=i8 dst=0x8000+2*CH src=2*CH shape=CH dstride=1 sstride=1 wait=0 signal=1 layer=2
    v.relu dtype=i8 dst=0x8000+3*CH src=3*CH shape=CH dstride=1 sstride=1 wait=0 signal=1 layer=2
    end

# prog_demo.s - a small two-engine program used by test/cli/asm.sh and
# shown in docs/asm.md: DMA brings 64 int8 values into LMEM, the vector
# unit applies ReLU, DMA writes the result back to DRAM.
.equ N    64
.equ IN   0x1000
.equ OUT  0x2000
.equ BUF  0x0              ; LMEM offsets
.equ RES  0x100

.data  x   dram:IN  i8 range -32 1 N        ; -32, -31, ..., 31
.zero  y   dram:OUT N
.expect y_ref dram:OUT i8 shape=N \
    0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 \
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
.output y_out dram:OUT i8 shape=1,N

.core 0
.engine dma
    dma.copy dtype=i8 dst=lmem:BUF src=dram:x shape=N dstride=1 sstride=1 signal=0 layer=1
    dma.copy dtype=i8 dst=dram:y src=lmem:RES shape=N dstride=1 sstride=1 wait=1 layer=1
    end
.engine vec
    v.relu dtype=i8 dst=RES src=BUF shape=N dstride=1 sstride=1 wait=0 signal=1 layer=1
    end

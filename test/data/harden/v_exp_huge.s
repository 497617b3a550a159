# issue 15: one v.exp of 9.9e10 elements (zero strides)
.cores 1
.core 0
.engine vec
    v.exp dtype=f32 dst=0 src=0x100 shape=65535,65535,23,1 dstride=0,0,0,0 sstride=0,0,0,0
    end

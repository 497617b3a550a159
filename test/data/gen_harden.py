#!/usr/bin/python3
# gen_harden.py - regenerates the hostile and careless inputs of issue 15
# (test/data/harden/, used by test/cli/harden_*.sh) and copies the ones that
# crashed or hung Atoll into the fuzz seed corpora (fuzz/seeds/). Plain
# Python 3: ONNX protobuf, .npy and zip are written by hand here, so the
# files are exactly the malformed ones wanted. Run with /usr/bin/python3;
# the tests themselves need no python.
import os, shutil, struct, zlib

d = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(d, "harden")
seeds = os.path.join(d, "..", "..", "fuzz", "seeds")
os.makedirs(out, exist_ok=True)

# ---- protobuf wire format ----
def varint(v):
    v &= (1 << 64) - 1
    b = bytearray()
    while True:
        x = v & 0x7f
        v >>= 7
        if v:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)

def tag(f, wt): return varint(f << 3 | wt)
def vint(f, v): return tag(f, 0) + varint(v)
def blob(f, b):
    b = b.encode() if isinstance(b, str) else b
    return tag(f, 2) + varint(len(b)) + b

F32, I64 = 1, 7

def value_info(name, dims=None, et=F32):
    tt = vint(1, et)
    if dims is not None:
        tt += blob(2, b"".join(blob(1, vint(1, x)) for x in dims))
    return blob(1, name) + blob(2, blob(1, tt))

def tensor(name, dims, et, raw):
    return b"".join(vint(1, x) for x in dims) + vint(2, et) + blob(8, name) + blob(9, raw)

def attr_ints(name, vals): return blob(1, name) + b"".join(vint(8, v) for v in vals) + vint(20, 7)

def node(op, ins, outs, name="", attrs=()):
    return (b"".join(blob(1, i) for i in ins) + b"".join(blob(2, o) for o in outs) + (blob(3, name) if name else b"")
            + blob(4, op) + b"".join(blob(5, a) for a in attrs))

def model(nodes, inputs, outputs, inits=(), opset=13):
    g = (b"".join(blob(1, n) for n in nodes) + blob(2, "g") + b"".join(blob(5, t) for t in inits)
         + b"".join(blob(11, i) for i in inputs) + b"".join(blob(12, o) for o in outputs))
    return vint(1, 8) + blob(8, blob(1, "") + vint(2, opset)) + blob(7, g)

def f32s(*v): return struct.pack("<%df" % len(v), *v)
def i64s(*v): return struct.pack("<%dq" % len(v), *v)

def save(name, data, seed_dir=None):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    if seed_dir:
        shutil.copy(os.path.join(out, name), os.path.join(seeds, seed_dir, name))

# ---- ONNX: compile crashes and hangs (issue 15 items 1, 4) ----
relu = lambda dims: model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", dims)], [value_info("y", dims)])
save("relu_dim0.onnx", relu([0]), "fuzz_onnx")                 # SIGFPE in compile
save("relu_dim2p32.onnx", relu([1 << 32]), "fuzz_onnx")        # SIGFPE in compile
save("relu_empty.onnx", relu([2, 0]))
save("relu14.onnx", relu([1, 4]))
save("relu_dyn.onnx", model([node("Relu", ["x"], ["y"], "relu")], [value_info("x")], [value_info("y")]))  # shape unknown                          # empty but a batch of 2: compiles to nothing
expand = lambda n: model([node("Expand", ["x", "s"], ["y"], "expand")], [value_info("x", [1, 1])], [value_info("y")],
                         [tensor("s", [2], I64, i64s(n >> 10, 1 << 10))])
save("expand_2p33.onnx", expand(1 << 33), "fuzz_onnx")         # compile spun for minutes
save("expand_2p29.onnx", expand(1 << 29))                      # 2 GiB io region on a 1 GiB chip
save("resize_1e6.onnx", model([node("Resize", ["x", "", "sc"], ["y"], "resize")], [value_info("x", [1, 1, 4, 4])],
                               [value_info("y")], [tensor("sc", [4], F32, f32s(1, 1, 1e6, 1e6))]), "fuzz_onnx")
# ---- ONNX: accepted although wrong (item 10) ----
save("conv_kernel_mismatch.onnx", model(
    [node("Conv", ["x", "w"], ["y"], "conv", [attr_ints("kernel_shape", [2, 2])])],
    [value_info("x", [1, 1, 4, 4])], [value_info("y")], [tensor("w", [1, 1, 3, 3], F32, f32s(*[1.0] * 9))]), "fuzz_onnx")
save("dup_inputs.onnx", model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", [1, 4]), value_info("x", [2, 8])],
                              [value_info("y")]), "fuzz_onnx")
save("no_outputs.onnx", model([node("Relu", ["x"], ["y"], "relu")], [value_info("x", [1, 4])], []), "fuzz_onnx")
save("attr_unknown_type.onnx", model(
    [node("Relu", ["x"], ["y"], "relu", [blob(1, "odd") + vint(3, 1) + vint(20, 99)])],
    [value_info("x", [1, 4])], [value_info("y")]), "fuzz_onnx")
save("attr_string_novalue.onnx", model(
    [node("Resize", ["x", "", "sc"], ["y"], "resize", [blob(1, "mode") + vint(20, 3)])],
    [value_info("x", [1, 1, 2, 2])], [value_info("y")], [tensor("sc", [4], F32, f32s(1, 1, 2, 2))]), "fuzz_onnx")
# ---- ONNX: a 2 GiB constant in the interpreter (item 8); an output name that is a path (item 14) ----
save("constantofshape_2g.onnx", model([node("ConstantOfShape", ["s"], ["big"], "cos"), node("Relu", ["x"], ["y"], "relu")],
                                      [value_info("x", [1, 4])], [value_info("y"), value_info("big")],
                                      [tensor("s", [1], I64, i64s(1 << 29))]), "fuzz_onnx")
save("path_output.onnx", model([node("Relu", ["x"], ["../../../tmp/x"], "relu")], [value_info("x", [1, 4])],
                               [value_info("../../../tmp/x", [1, 4])]))

# a 64 MiB weight whose external data file is missing: more than tiny's 16 MiB DRAM (item 8)
ext = (b"".join(vint(1, x) for x in [4096, 4096]) + vint(2, F32) + blob(8, "W")
       + blob(13, blob(1, "location") + blob(2, "missing_weights.bin")) + vint(14, 1))
save("synth_big.onnx", model([node("MatMul", ["x", "W"], ["y"], "mm")], [value_info("x", [1, 4096])], [value_info("y")], [ext]))

# ---- .npy / .npz (items 6, 14) ----
def npy(descr, shape, data=b""):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % s for s in shape) if len(shape) != 1 else "%d," % shape[0])
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + data

save("x14.npy", npy("<f4", [1, 4], f32s(1, -2, 3, -4)))
save("x0.npy", npy("<f4", [0]))
save("x1144.npy", npy("<f4", [1, 1, 4, 4], f32s(*range(16))))
save("x1122.npy", npy("<f4", [1, 1, 2, 2], f32s(1, 2, 3, 4)))
save("truncated_2p30.npy", npy("<f4", [1 << 30], f32s(1, 2)))  # claims 4 GiB, holds 8 bytes

def zipfile(members, extra_entries=0):
    """members: list of (name, raw bytes, deflate?); extra_entries more
    central directory entries pointing at the first member."""
    body, cdir, off = b"", b"", 0
    entries = []
    for name, raw, deflate in members:
        if deflate:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            comp = c.compress(raw) + c.flush()
        else:
            comp = raw
        crc = zlib.crc32(raw)
        n = name.encode()
        lh = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8 if deflate else 0, 0, 0x21, crc, len(comp), len(raw), len(n), 0)
        entries.append((n, 8 if deflate else 0, crc, len(comp), len(raw), off))
        body += lh + n + comp
        off += len(lh) + len(n) + len(comp)
    for k in range(extra_entries):
        n0, m0, c0, cs0, us0, o0 = entries[0]
        entries.append((b"dup%03d.npy" % k, m0, c0, cs0, us0, o0))
    for n, m, crc, cs, us, o in entries:
        cdir += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, m, 0, 0x21, crc, cs, us, len(n), 0, 0, 0, 0, 0, o) + n
    end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(entries), len(entries), len(cdir), off, 0)
    return body + cdir + end

# x of a [1,4] input declared as 64 MiB of zeros: refused before inflating
save("npz_bomb_64m.npz", zipfile([("x.npy", npy("<f4", [1 << 24], bytes(1 << 26)), True)]))
# one 1 MiB member listed 200 times in the central directory
save("npz_bomb_entries.npz", zipfile([("x.npy", npy("<f4", [1 << 18], bytes(1 << 20)), True)], extra_entries=200))
# ---- assembly (items 2, 3) ----
with open(os.path.join(out, "deep_parens.s"), "w") as f:
    f.write(".equ A " + "(" * 50000 + "1" + ")" * 50000 + "\n")
with open(os.path.join(out, "deep_minus.s"), "w") as f:
    f.write(".equ A " + "-" * 100000 + "1\n")
for name in ("deep_parens.s", "deep_minus.s"):
    shutil.copy(os.path.join(out, name), os.path.join(seeds, "fuzz_asm", name))
progs = {
    "dma_copy_huge.s": "    dma.copy dtype=i8 dst=dram:0 src=dram:0x100 shape=65535,65535,65535,65535 dstride=0,0,0,0 sstride=0,0,0,0\n",
    "dma_fill_huge.s": "    dma.fill dtype=i8 dst=dram:0 shape=65535,65535,65535,65535 dstride=0,0,0,0 value=0\n",
    "v_exp_huge.s": None,
}
for name, insn in progs.items():
    with open(os.path.join(out, name), "w") as f:
        if insn:
            f.write("# issue 15: one transfer of 65535^4 elements with zero strides\n.cores 1\n.core 0\n.engine dma\n" + insn + "    end\n")
        else:
            f.write("# issue 15: one v.exp of 9.9e10 elements (zero strides)\n.cores 1\n.core 0\n.engine vec\n"
                    "    v.exp dtype=f32 dst=0 src=0x100 shape=65535,65535,23,1 dstride=0,0,0,0 sstride=0,0,0,0\n    end\n")
    shutil.copy(os.path.join(out, name), os.path.join(seeds, "fuzz_asm", name))
# a statically faulting DMA stream (a bad instruction, then more): clang's UBSan saw a NULL plan offset
with open(os.path.join(out, "static_fault.s"), "w") as f:
    f.write("# issue 15 item 13: instruction 0 fails its static check, the rest are never planned\n"
            ".cores 1\n.core 0\n.engine dma\n"
            "    dma.copy dtype=i8 dst=dram:0x7fffffff src=dram:0 shape=64 dstride=1 sstride=1\n"
            "    dma.copy dtype=i8 dst=dram:0x100 src=dram:0 shape=64 dstride=1 sstride=1\n    end\n")
shutil.copy(os.path.join(out, "static_fault.s"), os.path.join(seeds, "fuzz_asm", "static_fault.s"))
print("wrote", sorted(os.listdir(out)))

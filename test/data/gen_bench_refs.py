#!/usr/bin/python3
# gen_bench_refs.py - regenerates test/data/bench/*.ref.npz, the broken
# references test/cli/bench.sh gives bench_models (with a copy of
# models/digits_cnn.onnx): each holds digits_cnn's reference input and an
# output that is missing, of the wrong size, of the wrong shape or 1% off;
# fancy.ref.npz feeds test/data/unsupported.onnx, which does not compile.
# Python's standard library only (an .npz is a zip of .npy files).
import ast, os, struct, zipfile
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out = os.path.join(root, "test", "data", "bench")

def read_npy(b):
    assert b[:6] == b"\x93NUMPY"
    hlen = struct.unpack("<H", b[8:10])[0]
    hdr = ast.literal_eval(b[10:10 + hlen].decode())
    assert hdr["descr"] == "<f4" and not hdr["fortran_order"]
    return hdr["shape"], list(struct.unpack("<%df" % (len(b[10 + hlen:]) // 4), b[10 + hlen:]))

def npy(shape, values):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (repr(tuple(shape)),)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<%df" % len(values), *values)

with zipfile.ZipFile(os.path.join(root, "models", "digits_cnn.ref.npz")) as z:
    xs, x = read_npy(z.read("input.npy"))
    ys, y = read_npy(z.read("output.npy"))
cases = {
    "noref": {"input": (xs, x), "logits": (ys, y)},                  # no array named like the output
    "short": {"input": (xs, x), "output": ((len(y) - 1,), y[:-1])},  # one element short
    "shape": {"input": (xs, x), "output": ((len(y), 1), y)},         # same values, transposed shape
    "wrong": {"input": (xs, x), "output": (ys, [v * 1.01 for v in y])},  # 1% off
    "fancy": {"x": ((2, 3), [1.0] * 6)},  # input of test/data/unsupported.onnx (op FancyOp)
}
for name, arrays in cases.items():
    with zipfile.ZipFile(os.path.join(out, name + ".ref.npz"), "w", zipfile.ZIP_STORED) as z:
        for k, (shape, vals) in arrays.items():
            z.writestr(k + ".npy", npy(shape, vals))

#!/usr/bin/python3
# gen_models.py - regenerates the small ONNX models and inputs used by the CLI
# tests (test/cli/onnx.sh) with the onnx Python package; expected outputs are
# computed with numpy here and stored next to them. Run with /usr/bin/python3.
import numpy as np, onnx, os
from onnx import helper, TensorProto, numpy_helper
d = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)

# convbn.onnx: x[N,3,8,8] -> Conv(4,3,3,3, pad 1) -> BN -> Relu -> Shape/Gather/Concat/Reshape -> Gemm
W = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
B = rng.standard_normal(4).astype(np.float32)
sc, bi = rng.uniform(0.5, 1.5, 4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
mu, var = rng.standard_normal(4).astype(np.float32), rng.uniform(0.5, 2, 4).astype(np.float32)
FW = rng.standard_normal((5, 256)).astype(np.float32)
FB = rng.standard_normal(5).astype(np.float32)
inits = [numpy_helper.from_array(a, n) for a, n in [(W, "W"), (B, "B"), (sc, "sc"), (bi, "bi"), (mu, "mu"), (var, "var"),
         (FW, "FW"), (FB, "FB"), (np.array(0, np.int64), "zero"), (np.array([-1], np.int64), "minus1")]]
nodes = [
    helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c", "sc", "bi", "mu", "var"], ["bn"], name="bn1", epsilon=1e-5),
    helper.make_node("Relu", ["bn"], ["r"], name="relu1"),
    helper.make_node("Shape", ["r"], ["s"], name="shape1"),
    helper.make_node("Gather", ["s", "zero"], ["n"], name="gather1", axis=0),
    helper.make_node("Unsqueeze", ["n"], ["n1"], name="unsq1", axes=[0]),
    helper.make_node("Concat", ["n1", "minus1"], ["shp"], name="concat1", axis=0),
    helper.make_node("Reshape", ["r", "shp"], ["flat"], name="reshape1"),
    helper.make_node("Identity", ["flat"], ["flat2"], name="id1"),
    helper.make_node("Gemm", ["flat2", "FW", "FB"], ["y"], name="fc", transB=1),
]
g = helper.make_graph(nodes, "convbn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
onnx.checker.check_model(m)
onnx.save(m, f"{d}/convbn.onnx")
x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
np.save(f"{d}/convbn_x.npy", x)
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
c = np.zeros((2, 4, 8, 8), np.float32)
for i in range(8):
    for j in range(8):
        c[:, :, i, j] = np.einsum("nchw,mchw->nm", xp[:, :, i:i + 3, j:j + 3], W)
c += B[None, :, None, None]
bn = (c - mu[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * sc[None, :, None, None] + bi[None, :, None, None]
y = np.maximum(bn, 0).reshape(2, -1) @ FW.T + FB
np.save(f"{d}/convbn_y.npy", y.astype(np.float32))

# unsupported.onnx: a node named "weird_node" with op "FancyOp"
g = helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], name="weird_node")], "unsup",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/unsupported.onnx")

# truncated.onnx: the first 100 bytes of convbn.onnx
open(f"{d}/truncated.onnx", "wb").write(open(f"{d}/convbn.onnx", "rb").read()[:100])

# extdata.onnx: an initializer in an external file (extdata.bin, offset 8)
w = np.arange(6, dtype=np.float32).reshape(2, 3)
open(f"{d}/extdata.bin", "wb").write(b"\0" * 8 + w.tobytes())
t = TensorProto(); t.name = "w"; t.data_type = TensorProto.FLOAT; t.dims.extend([2, 3])
t.data_location = TensorProto.EXTERNAL
for k, v in [("location", "extdata.bin"), ("offset", "8"), ("length", "24")]:
    e = t.external_data.add(); e.key = k; e.value = v
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add1")], "ext",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [t])
open(f"{d}/extdata.onnx", "wb").write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
np.save(f"{d}/ones23.npy", np.ones((2, 3), np.float32))

# badshape.onnx: Add of x[N,3] and a constant of shape [4]: inconsistent once N is known
g = helper.make_graph([helper.make_node("Add", ["x", "c4"], ["y"], name="add_bad")], "bad",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [numpy_helper.from_array(np.ones(4, np.float32), "c4")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/badshape.onnx")

# convbn_in.npz: the same input as an .npz keyed by input name
np.savez(f"{d}/convbn_in.npz", x=x)

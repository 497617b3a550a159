#!/usr/bin/python3
# gen_synth.py - regenerates synth.onnx + synth.bin, a small model whose
# weights live in an external data file, for the --synthetic-weights tests
# (test/compiler/test_synth.c, test/cli/synth.sh). The tests copy only the
# .onnx to a temporary directory, so the data file is missing there.
# Run with /usr/bin/python3 (needs the onnx package).
import numpy as np, onnx, os
from onnx import helper, TensorProto, numpy_helper
d = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
arrays = [
    ("conv.w", rng.standard_normal((8, 3, 3, 3)).astype(np.float32)),   # fan_in 27
    ("conv.b", rng.standard_normal(8).astype(np.float32)),
    ("bn.scale", rng.uniform(0.5, 1.5, 8).astype(np.float32)),
    ("bn.bias", rng.standard_normal(8).astype(np.float32)),
    ("bn.mean", rng.standard_normal(8).astype(np.float32)),
    ("bn.var", rng.uniform(0.5, 1.5, 8).astype(np.float32)),
    ("fc.w", rng.standard_normal((16, 128)).astype(np.float32)),        # Gemm transB: fan_in 128
    ("fc.b", rng.standard_normal(16).astype(np.float32)),
    ("proj.w", rng.standard_normal((16, 4)).astype(np.float32)),        # MatMul: fan_in 16
]
blob = b""
inits = []
for name, a in arrays:
    while len(blob) % 64: blob += b"\0"
    t = numpy_helper.from_array(a, name)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in [("location", "synth.bin"), ("offset", str(len(blob))), ("length", str(a.nbytes))]:
        e = t.external_data.add(); e.key = k; e.value = v
    blob += a.tobytes()
    inits.append(t)
nodes = [
    helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["n"], name="bn"),
    helper.make_node("Relu", ["n"], ["r"], name="relu"),
    helper.make_node("Flatten", ["r"], ["f"], name="flat"),
    helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["h"], name="fc", transB=1),
    helper.make_node("MatMul", ["h", "proj.w"], ["y"], name="proj"),
]
g = helper.make_graph(nodes, "synth", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
open(f"{d}/synth.onnx", "wb").write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
open(f"{d}/synth.bin", "wb").write(blob)
np.save(f"{d}/synth_x.npy", rng.standard_normal((1, 3, 8, 8)).astype(np.float32))

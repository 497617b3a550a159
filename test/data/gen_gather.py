#!/usr/bin/python3
# gen_gather.py - regenerates the Gather-with-run-time-indices model used by
# test/cli/gather.sh (an embedding lookup: table x[5,3] float32, indices
# idx[2,2] as a graph input), its inputs (in range with a negative index,
# and with index 7 out of range) and the expected output (numpy). Run with
# /usr/bin/python3 (needs onnx, numpy); the test itself needs no python.
import numpy as np, onnx, os
from onnx import helper, TensorProto
d = os.path.dirname(os.path.abspath(__file__))
g = helper.make_graph(
    [helper.make_node("Gather", ["x", "idx"], ["g"], name="lookup", axis=0),
     helper.make_node("Relu", ["g"], ["y"], name="relu")],
    "embedding",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3]),
     helper.make_tensor_value_info("idx", TensorProto.INT64, [2, 2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2, 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(d, "gather_rt.onnx"))
x = (np.arange(15, dtype=np.float32).reshape(5, 3) - 4) * 0.5
idx = np.array([[4, 0], [-1, 2]], np.int32)
np.savez(os.path.join(d, "gather_rt_in.npz"), x=x, idx=idx)
np.save(os.path.join(d, "gather_rt_y.npy"), np.maximum(x[idx], 0))
np.savez(os.path.join(d, "gather_rt_bad.npz"), x=x, idx=np.array([[1, 7], [0, 0]], np.int32))

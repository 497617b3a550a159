#!/usr/bin/python3
# gen_int_io.py - regenerates the integer-io model used by test/cli/int_io.sh:
# int64 inputs a[2,3] and b[3] -> Add -> Mul by a constant -> Transpose,
# output int64; a bool input m[2,3] passed through Not-free ops (Identity)
# as a bool output. Inputs: in range (int_io_in.npz) and with an int64
# beyond int32 (int_io_big.npz). Run with /usr/bin/python3 (onnx, numpy);
# the test itself needs no python.
import numpy as np, onnx, os
from onnx import helper, TensorProto, numpy_helper
d = os.path.dirname(os.path.abspath(__file__))
k = numpy_helper.from_array(np.array([3, -2, 5], np.int64), "k")
g = helper.make_graph(
    [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
     helper.make_node("Mul", ["s", "k"], ["p"], name="mul"),
     helper.make_node("Transpose", ["p"], ["y"], name="tr", perm=[1, 0]),
     helper.make_node("Identity", ["m"], ["mo"], name="id")],
    "int_io",
    [helper.make_tensor_value_info("a", TensorProto.INT64, [2, 3]),
     helper.make_tensor_value_info("b", TensorProto.INT64, [3]),
     helper.make_tensor_value_info("m", TensorProto.BOOL, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.INT64, [3, 2]),
     helper.make_tensor_value_info("mo", TensorProto.BOOL, [2, 3])],
    [k])
mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
mdl.ir_version = 8
onnx.save(mdl, os.path.join(d, "int_io.onnx"))
a = np.array([[1, -7, 100000], [40, 0, -3]], np.int64)
b = np.array([5, 6, -7], np.int64)
m = np.array([[True, False, True], [False, False, True]])
np.savez(os.path.join(d, "int_io_in.npz"), a=a, b=b, m=m)
big = a.copy()
big[1, 1] = 1 << 40
np.savez(os.path.join(d, "int_io_big.npz"), a=big, b=b, m=m)

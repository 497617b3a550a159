#!/usr/bin/python3
# gen_npy.py - regenerates the NumPy fixtures used by test/util/test_npy.c.
# Run with /usr/bin/python3 (needs numpy); the tests themselves need no python.
import numpy as np, os
d = os.path.dirname(os.path.abspath(__file__))
np.save(f"{d}/np_f32.npy", np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5)
np.save(f"{d}/np_f16.npy", np.array([1.0, -2.5, 65504.0], dtype=np.float16))
np.save(f"{d}/np_i64.npy", np.array([[-1], [2**40]], dtype=np.int64))
np.save(f"{d}/np_bool.npy", np.array([True, False, True]))
np.save(f"{d}/np_scalar.npy", np.array(3, dtype=np.int32))
np.save(f"{d}/np_fortran.npy", np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
np.save(f"{d}/np_f64.npy", np.ones(2, dtype=np.float64))
np.savez(f"{d}/np_stored.npz", a=np.arange(4, dtype=np.uint8), b=np.full((2, 2), -3, dtype=np.int8))
np.savez_compressed(f"{d}/np_deflated.npz", x=np.linspace(0, 1, 100, dtype=np.float32).reshape(10, 10), y=np.arange(5, dtype=np.int32))
# the digits CNN's reference input alone (its .ref.npz also holds PyTorch's
# float output, which `atoll compare` would take as the expected value:
# test/cli/quantize.sh compares a quantised model with its interpreter run)
r = np.load(f"{d}/../../models/digits_cnn.ref.npz")
np.save(f"{d}/digits_x.npy", r["input"])

#!/usr/bin/python3
"""Verify the Atoll model zoo in models/ (see models/README.md).

Why this exists: the .onnx files and .npz references are what the compiler and
simulator are tested against, so they must be right and must agree with each
other. onnx 1.12 has no reference runtime (onnx.reference arrived in 1.13) and
onnxruntime is not installed, so this script checks three ways:

  1. structure: onnx.checker.check_model (with full shape inference), opset 13,
     only operators of the Atoll front end, graph inputs/outputs match the .npz
     names, dtypes and shapes; full-size graphs are < 1 MB, every weight is
     external and (when the git-ignored .onnx.data file exists) lies inside it;
  2. PyTorch: rebuild each small model with generate.py's seeded builders
     (digits_cnn is retrained, deterministically), run it on the stored inputs
     and compare with the stored outputs (reports whether bit-exact);
  3. ONNX graph: run each small .onnx with the small float64 numpy evaluator
     below and compare with the stored outputs; for digits_cnn also on the
     whole test set (dynamic batch), recomputing the accuracy.

Usage:
  /usr/bin/python3 models/check.py                  # check models/
  /usr/bin/python3 models/check.py --only vit_tiny  # one model
  /usr/bin/python3 models/check.py --no-torch       # skip step 2 (faster)
  /usr/bin/python3 models/check.py --compare DIR    # byte-compare with another
                                                    # generate.py --out DIR run
Exits non-zero on any failure.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402  (the builders and the supported-op list)

# Relative tolerance of the ONNX evaluator (float64) against PyTorch (float32):
# max |onnx - ref| <= TOL * max(1, max |ref|).
TOL = 1e-4


# ---------------------------------------------------------------------------
# A minimal float64 ONNX evaluator for the operators the small models use
# ---------------------------------------------------------------------------

def _attrs(node):
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, onnx.TensorProto):
            v = numpy_helper.to_array(v)
        elif isinstance(v, bytes):
            v = v.decode()
        out[a.name] = v
    return out


def _widen(a):
    """Evaluate in float64 (the exact answer to compare float32 results with)."""
    a = np.asarray(a)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def _window(x, kernel, strides, dilations):
    """N x C x H x W -> N x C x OH x OW x KH x KW view of sliding windows."""
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = strides
    dh, dw = dilations
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    s = x.strides
    return np.lib.stride_tricks.as_strided(
        x, (n, c, oh, ow, kh, kw),
        (s[0], s[1], s[2] * sh, s[3] * sw, s[2] * dh, s[3] * dw), writeable=False)


def _pad2d(x, pads, value):
    t, l, b, r = pads
    return np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=value)


def _conv(x, w, b=None, group=1, pads=(0, 0, 0, 0), strides=(1, 1),
          dilations=(1, 1), kernel_shape=None, **_):
    x = _pad2d(x, pads, 0.0)
    cols = _window(x, w.shape[2:], strides, dilations)      # n c oh ow kh kw
    n, c, oh, ow, kh, kw = cols.shape
    m = w.shape[0]
    cols = cols.reshape(n, group, c // group, oh, ow, kh, kw)
    wg = w.reshape(group, m // group, c // group, kh, kw)
    y = np.einsum("ngchwij,gmcij->ngmhw", cols, wg, optimize=True)
    y = y.reshape(n, m, oh, ow)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def _pool(x, kind, kernel_shape, pads=(0, 0, 0, 0), strides=None,
          ceil_mode=0, count_include_pad=0, dilations=(1, 1), **_):
    assert not ceil_mode, "ceil_mode pooling not implemented"
    strides = strides or (1, 1)
    if kind == "max":
        win = _window(_pad2d(x, pads, -np.inf), kernel_shape, strides, dilations)
        return win.max(axis=(4, 5))
    total = _window(_pad2d(x, pads, 0.0), kernel_shape, strides, dilations).sum(axis=(4, 5))
    if count_include_pad:
        return total / (kernel_shape[0] * kernel_shape[1])
    ones = _pad2d(np.ones((1, 1) + x.shape[2:]), pads, 0.0)
    count = _window(ones, kernel_shape, strides, dilations).sum(axis=(4, 5))
    return total / count


def _gemm(a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    y = alpha * ((a.T if transA else a) @ (b.T if transB else b))
    return y if c is None else y + beta * c


def _reshape(x, shape, allowzero=0):
    shape = [int(d) for d in shape]
    if not allowzero:
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def _slice(x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[int(a)] = slice(int(s), int(e), int(st))  # Python clamps like ONNX
    return x[tuple(index)]


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _pad(x, pads, value=None, mode="constant"):
    assert mode == "constant", "Pad mode %s not implemented" % mode
    half = len(pads) // 2
    width = [(int(pads[i]), int(pads[i + half])) for i in range(half)]
    return np.pad(x, width, constant_values=0 if value is None else value)


def _div(a, b):
    if a.dtype.kind in "iu":
        return np.trunc(a / b).astype(a.dtype)
    return a / b


_erf = np.frompyfunc(math.erf, 1, 1)

# op -> function(inputs..., **attributes); absent optional inputs are None.
OPS = {
    "Identity": lambda x: x,
    "Dropout": lambda x, *_, **__: x,
    "Constant": lambda value: value,
    "Relu": lambda x: np.maximum(x, 0),
    "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Sqrt": np.sqrt,
    "Exp": np.exp,
    "Neg": np.negative,
    "Erf": lambda x: _erf(x).astype(np.float64),
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _div,
    "Pow": np.power,
    "Equal": np.equal,
    "Where": np.where,
    "MatMul": np.matmul,
    "Gemm": _gemm,
    "Conv": _conv,
    "MaxPool": lambda x, **a: _pool(x, "max", **a),
    "AveragePool": lambda x, **a: _pool(x, "avg", **a),
    "GlobalAveragePool": lambda x: x.mean(axis=(2, 3), keepdims=True),
    "BatchNormalization": lambda x, s, b, m, v, epsilon=1e-5, **_:
        (x - m.reshape(1, -1, 1, 1)) / np.sqrt(v.reshape(1, -1, 1, 1) + epsilon)
        * s.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1),
    "Clip": lambda x, lo=None, hi=None: np.clip(
        x, -np.inf if lo is None else lo, np.inf if hi is None else hi),
    "Flatten": lambda x, axis=1: x.reshape(int(np.prod(x.shape[:axis])), -1),
    "Softmax": _softmax,
    "ReduceMean": lambda x, axes=None, keepdims=1: x.mean(
        axis=None if axes is None else tuple(axes), keepdims=bool(keepdims)),
    "Reshape": _reshape,
    "Transpose": lambda x, perm=None: np.transpose(x, perm),
    "Pad": _pad,
    "Shape": lambda x: np.array(x.shape, dtype=np.int64),
    "Gather": lambda x, i, axis=0: np.take(x, i, axis=axis),
    "Concat": lambda *xs, axis: np.concatenate(xs, axis=axis),
    "Unsqueeze": lambda x, axes: np.expand_dims(x, tuple(int(a) for a in axes)),
    "Squeeze": lambda x, axes=None: np.squeeze(
        x, None if axes is None else tuple(int(a) for a in axes)),
    "ConstantOfShape": lambda shape, value=np.zeros(1, np.float32):
        np.full(tuple(int(d) for d in shape), _widen(value).reshape(())),
    "Expand": lambda x, shape: np.broadcast_to(
        x, np.broadcast_shapes(x.shape, tuple(int(d) for d in shape))),
    "Slice": _slice,
    "Cast": lambda x, to: _widen(x.astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[to])),
}


def run_onnx(model, feeds):
    """Evaluate `model` (topologically ordered, as ONNX requires) on feeds."""
    env = {t.name: _widen(numpy_helper.to_array(t)) for t in model.graph.initializer}
    env.update({k: _widen(v) for k, v in feeds.items()})
    for node in model.graph.node:
        if node.op_type not in OPS:
            raise NotImplementedError("evaluator lacks operator " + node.op_type)
        args = [env[i] if i else None for i in node.input]
        result = OPS[node.op_type](*args, **_attrs(node))
        results = result if isinstance(result, tuple) else (result,)
        for name, value in zip(node.output, results):
            env[name] = np.asarray(value)
    return {o.name: env[o.name] for o in model.graph.output}


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.failures = 0

    def ok(self, name, what):
        print("  ok    %-16s %s" % (name, what))

    def fail(self, name, what):
        self.failures += 1
        print("  FAIL  %-16s %s" % (name, what))

    def expect(self, cond, name, what):
        (self.ok if cond else self.fail)(name, what)
        return cond


def rel_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / max(1.0, float(np.abs(want).max())))


def graph_shapes(values):
    return {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in values}


def without_external_weights(model):
    """Copy of `model` whose external initializers are turned into graph
    inputs of the same type and shape, so the checker can validate the graph
    when the (git-ignored) .onnx.data file is absent."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    keep = []
    for t in copy.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            copy.graph.input.append(
                onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        else:
            keep.append(t)
    del copy.graph.initializer[:]
    copy.graph.initializer.extend(keep)
    return copy


def run_checker(rep, name, what, model):
    # full_check on a *path* would run infer_shapes_path, which rewrites the
    # file in place; so paths get the plain check (it opens the external
    # data), protos the full one.
    try:
        onnx.checker.check_model(model, full_check=not isinstance(model, str))
        rep.ok(name, "onnx.checker (full_check) " + what)
    except Exception as exc:  # the checker raises several exception types
        rep.fail(name, "onnx.checker %s: %s" % (what, exc))


def check_structure(rep, entry, model, path):
    name = entry["name"]
    if entry.get("external_data"):
        run_checker(rep, name, "on the graph, weights as inputs",
                    without_external_weights(model))
        if os.path.exists(path + ".data"):
            run_checker(rep, name, "by path, with " + os.path.basename(path) + ".data",
                        path)
    else:
        run_checker(rep, name, "", model)
    opsets = {o.domain: o.version for o in model.opset_import}
    rep.expect(opsets.get("", opsets.get("ai.onnx")) == generate.OPSET, name,
               "opset %s" % opsets)
    ops = sorted({n.op_type for n in model.graph.node})
    bad = sorted(set(ops) - generate.SUPPORTED_OPS)
    rep.expect(not bad, name, "ops supported by Atoll: %s%s" % (
        " ".join(ops), "; UNSUPPORTED: " + " ".join(bad) if bad else ""))
    if entry.get("external_data"):
        size = os.path.getsize(path)
        rep.expect(size < 1 << 20, name, "graph-only .onnx is %d bytes (< 1 MiB)" % size)
        data_path = os.path.join(os.path.dirname(path), entry["name"] + ".onnx.data")
        have_data = os.path.exists(data_path)
        data_size = os.path.getsize(data_path) if have_data else None
        inline = bad_ext = 0
        for t in model.graph.initializer:
            if not generate.is_weight(t):
                continue
            if t.data_location != onnx.TensorProto.EXTERNAL or t.HasField("raw_data"):
                inline += 1
                continue
            info = {kv.key: kv.value for kv in t.external_data}
            end = int(info.get("offset", 0)) + int(info.get("length", 0))
            if info.get("location") != name + ".onnx.data" or (
                    have_data and end > data_size):
                bad_ext += 1
        rep.expect(inline == 0 and bad_ext == 0, name,
                   "weights external (%d inline, %d bad references; data file %s)" % (
                       inline, bad_ext, "present" if have_data else "absent"))


def check_reference(rep, entry, model, models_dir, use_torch):
    name = entry["name"]
    ref_path = os.path.join(models_dir, name + ".ref.npz")
    ref = dict(np.load(ref_path))
    ins, outs = graph_shapes(model.graph.input), graph_shapes(model.graph.output)
    rep.expect(list(ref) == list(ins) + list(outs), name,
               "npz arrays %s = graph inputs + outputs" % list(ref))
    for tname, dims in list(ins.items()) + list(outs.items()):
        arr = ref.get(tname)
        good = arr is not None and arr.dtype == np.float32 and len(arr.shape) == len(dims) \
            and all(isinstance(d, str) or d == s for d, s in zip(dims, arr.shape))
        rep.expect(good, name, "%s %s matches graph %s" % (
            tname, None if arr is None else list(arr.shape), dims))
    feeds = {k: ref[k] for k in ins}
    got = run_onnx(model, feeds)
    for o in outs:
        err = rel_error(got[o], ref[o])
        rep.expect(err <= TOL, name, "ONNX evaluator vs npz %s: rel err %.2e" % (o, err))
    if use_torch:
        spec = generate.build(name)
        torch_out = generate.run_torch(spec["module"], feeds)
        for o, value in zip(outs, torch_out):
            exact = np.array_equal(value, ref[o])
            err = rel_error(value, ref[o])
            rep.expect(err <= 1e-6, name, "PyTorch rerun vs npz %s: %s" % (
                o, "bit-exact" if exact else "rel err %.2e" % err))
    if name == "digits_cnn":
        check_digits(rep, model, models_dir)


def check_digits(rep, model, models_dir):
    test = dict(np.load(os.path.join(models_dir, "digits_cnn.test.npz")))
    with open(os.path.join(models_dir, "digits_cnn.json")) as f:
        info = json.load(f)
    x, labels = test["input"], test["labels"]
    rep.expect(x.dtype == np.float32 and x.shape[1:] == (1, 8, 8) and
               labels.dtype == np.int64 and len(labels) == len(x) ==
               info["num_test_images"], "digits_cnn",
               "test set %s float32, labels %s int64" % (list(x.shape), list(labels.shape)))
    logits = run_onnx(model, {"input": x})["output"]
    err = rel_error(logits, test["output"])
    rep.expect(err <= TOL, "digits_cnn", "ONNX evaluator, whole test set (batch %d): "
               "rel err %.2e" % (len(x), err))
    pred = logits.argmax(axis=1)
    acc = float((pred == labels).mean())
    rep.expect(pred.tolist() == info["predicted"] and abs(acc - info["accuracy"]) < 1e-6,
               "digits_cnn", "ONNX accuracy %.4f = digits_cnn.json %.4f, same "
               "per-image predictions" % (acc, info["accuracy"]))


def compare_trees(rep, a_dir, b_dir, names):
    """Byte-compare two generated trees (all files each manifest lists)."""
    with open(os.path.join(a_dir, "manifest.json")) as f:
        a = {m["name"]: m for m in json.load(f)["models"]}
    with open(os.path.join(b_dir, "manifest.json")) as f:
        b = {m["name"]: m for m in json.load(f)["models"]}
    for name in names:
        files = sorted(a[name]["files"])
        if a[name].get("external_data"):
            files.append(a[name]["external_data"])
        for rel in files:
            pa, pb = os.path.join(a_dir, rel), os.path.join(b_dir, rel)
            if not (os.path.exists(pa) and os.path.exists(pb)):
                rep.fail(name, "%s missing in one tree" % rel)
                continue
            with open(pa, "rb") as fa, open(pb, "rb") as fb:
                same = fa.read() == fb.read()
            rep.expect(same, name, "%s byte-identical" % rel)
        rep.expect(a[name] == b.get(name), name, "manifest entry identical")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=HERE, help="zoo directory (default: models/)")
    ap.add_argument("--only", action="append", help="check only this model")
    ap.add_argument("--no-torch", action="store_true",
                    help="skip rebuilding the PyTorch modules")
    ap.add_argument("--compare", metavar="DIR",
                    help="also byte-compare with a second generate.py output")
    args = ap.parse_args()
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    entries = [m for m in manifest["models"] if not args.only or m["name"] in args.only]
    rep = Report()
    for entry in entries:
        rel = next(r for r in entry["files"] if r.endswith(".onnx"))
        path = os.path.join(args.dir, rel)
        print("%s (%s)" % (entry["name"], rel), flush=True)
        model = onnx.load(path, load_external_data=False)
        check_structure(rep, entry, model, path)
        if not entry.get("external_data"):
            check_reference(rep, entry, model, args.dir, not args.no_torch)
    if args.compare:
        print("compare %s with %s" % (args.dir, args.compare))
        compare_trees(rep, args.dir, args.compare, [e["name"] for e in entries])
    print("%d failure(s)" % rep.failures)
    return 1 if rep.failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""atoll - compile ONNX models for a simulated Atoll chip, run them and read
the cycles, from Python.

A thin layer over the shared library libatoll.so (the C API of
include/atoll.h) through ctypes, with numpy arrays in and out; nothing to
build. Importable from the repository with PYTHONPATH=python (after `make`)
and installed by `make install`.

    import atoll, numpy as np
    net = atoll.compile("models/resnet20_cifar.onnx", chip="a1")
    out = net.run({"input": x})          # dict: output name -> numpy array
    print(net.stats()["cycles"])         # cycles, engines, per-layer table

Inputs of another width are converted by the library (float16/32/64 into
any float input, bfloat16 included; integers into integer inputs when every
value fits); bfloat16 outputs come back as float32.
"""
import ctypes
import os
import tempfile

import numpy as np

__all__ = ["AtollError", "Net", "compile", "load", "chip_path", "library"]

MAX_DIMS = 6
ENGINES = ("dma", "matrix", "vector")
_HERE = os.path.dirname(os.path.abspath(__file__))

# element types: include/atoll.h's numbering and numpy's
INT8, UINT8, INT16, INT32, FP16, BF16, FP32, FP64, INT64, BOOL, UINT16, UINT32, UINT64 = range(13)
_NP = {INT8: np.int8, UINT8: np.uint8, INT16: np.int16, INT32: np.int32, FP16: np.float16, FP32: np.float32,
       FP64: np.float64, INT64: np.int64, BOOL: np.bool_, UINT16: np.uint16, UINT32: np.uint32, UINT64: np.uint64}
_OF_NP = {np.dtype(v): k for k, v in _NP.items()}
_NAMES = {INT8: "int8", UINT8: "uint8", INT16: "int16", INT32: "int32", FP16: "float16", BF16: "bfloat16",
          FP32: "float32"}


class AtollError(RuntimeError):
    """A failure of the library, with its message (it names the model,
    node, tensor or option)."""


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("role", ctypes.c_int), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("dims", ctypes.c_uint32 * MAX_DIMS), ("bytes", ctypes.c_uint64), ("quant_count", ctypes.c_uint32),
                ("scale", ctypes.c_float), ("zero_point", ctypes.c_int32), ("device_addr", ctypes.c_uint64)]


class _LayerInfo(ctypes.Structure):
    _fields_ = [("layer", ctypes.c_uint32), ("name", ctypes.c_char_p), ("op", ctypes.c_char_p), ("split", ctypes.c_char_p),
                ("tiles", ctypes.c_uint32), ("cores", ctypes.c_uint32), ("matrix", ctypes.c_int),
                ("macs", ctypes.c_uint64), ("est_cycles", ctypes.c_uint64), ("est_compute", ctypes.c_uint64),
                ("est_dma", ctypes.c_uint64)]


class _PipeStageInfo(ctypes.Structure):
    _fields_ = [("stage", ctypes.c_uint32), ("first_layer", ctypes.c_uint32), ("n_layers", ctypes.c_uint32),
                ("micro_batch", ctypes.c_uint32), ("instances", ctypes.c_uint32), ("cores", ctypes.c_uint32),
                ("input", ctypes.c_char_p), ("macs", ctypes.c_uint64), ("mat_cycles", ctypes.c_uint64),
                ("est_cycles", ctypes.c_uint64), ("dram_tensors", ctypes.c_uint32)]


class _StageInfo(ctypes.Structure):
    _fields_ = [("batch", ctypes.c_uint32), ("cores", ctypes.c_uint32), ("n_inputs", ctypes.c_uint32),
                ("n_outputs", ctypes.c_uint32), ("inputs", ctypes.POINTER(_TensorInfo)),
                ("outputs", ctypes.POINTER(_TensorInfo)), ("n_tensors", ctypes.c_uint32),
                ("tensors", ctypes.POINTER(_TensorInfo)), ("n_layers", ctypes.c_uint32),
                ("layers", ctypes.POINTER(_LayerInfo)), ("n_stages", ctypes.c_uint32),
                ("stages", ctypes.POINTER(_PipeStageInfo))]


class _NetInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("n_variants", ctypes.c_uint32), ("variants", ctypes.POINTER(_StageInfo))]


class _Buffer(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("size", ctypes.c_size_t), ("ndim", ctypes.c_int),
                ("dims", ctypes.c_uint32 * MAX_DIMS)]


class _LayerProfile(ctypes.Structure):
    _fields_ = [("layer", ctypes.c_uint32), ("insns", ctypes.c_uint64), ("first", ctypes.c_uint64),
                ("last", ctypes.c_uint64), ("macs", ctypes.c_uint64), ("dma_bytes", ctypes.c_uint64),
                ("busy_mat", ctypes.c_uint64), ("busy_vec", ctypes.c_uint64), ("busy_dma", ctypes.c_uint64),
                ("sync", ctypes.c_uint64), ("bound", ctypes.c_char_p), ("dram_bytes", ctypes.c_uint64),
                ("held", ctypes.c_uint64), ("cycles", ctypes.c_uint64), ("member", ctypes.c_int32)]


class _StageProfile(ctypes.Structure):
    _fields_ = [("stage", ctypes.c_uint32), ("first", ctypes.c_uint64), ("last", ctypes.c_uint64),
                ("held", ctypes.c_uint64), ("cycles", ctypes.c_uint64), ("macs", ctypes.c_uint64),
                ("dram_bytes", ctypes.c_uint64), ("mac_util", ctypes.c_double)]


class _Profile(ctypes.Structure):
    _fields_ = [("cycles", ctypes.c_uint64), ("fw_cycles", ctypes.c_uint64), ("seconds", ctypes.c_double),
                ("macs", ctypes.c_uint64), ("dram_bytes", ctypes.c_uint64), ("cores", ctypes.c_uint32),
                ("busy", ctypes.c_uint64 * 3), ("stall", ctypes.c_uint64 * 3), ("utilisation", ctypes.c_double * 3),
                ("n_layers", ctypes.c_uint32), ("layers", ctypes.POINTER(_LayerProfile)),
                ("n_stages", ctypes.c_uint32), ("stages", ctypes.POINTER(_StageProfile)),
                ("n_members", ctypes.c_uint32), ("members", ctypes.POINTER(_LayerProfile))]


def _layer_dict(l, r):
    """One layer's (or layer group member's) profile record l as a dict,
    with the compiler's row r (None without layer_info)."""
    return {"name": _text(r.name) if r else None, "op": _text(r.op) if r else None,
            "bound": _text(l.bound), "est_cycles": int(r.est_cycles) if r and r.est_cycles else None,
            "cycles": int(l.cycles), "first": int(l.first), "last": int(l.last),
            "macs": int(l.macs), "dram_bytes": int(l.dram_bytes), "dma_bytes": int(l.dma_bytes),
            "busy": {"dma": int(l.busy_dma), "matrix": int(l.busy_mat), "vector": int(l.busy_vec)},
            "held": int(l.held), "instructions": int(l.insns)}


class _OpenOptions(ctypes.Structure):
    _fields_ = [("fw_heap_bytes", ctypes.c_size_t), ("trace", ctypes.c_int), ("max_cycles", ctypes.c_uint64),
                ("timing_only", ctypes.c_int), ("max_work", ctypes.c_uint64)]


class _CompileOptions(ctypes.Structure):
    _fields_ = [("chip", ctypes.c_char_p), ("dtype", ctypes.c_char_p), ("batches", ctypes.POINTER(ctypes.c_uint32)),
                ("n_batches", ctypes.c_uint32), ("input_shapes", ctypes.POINTER(ctypes.c_char_p)),
                ("n_input_shapes", ctypes.c_uint32), ("net_name", ctypes.c_char_p),
                ("synthetic_weights", ctypes.c_int), ("layer_info", ctypes.c_int)]


def _find_library():
    """libatoll.so.0: $ATOLL_LIB, else the repository's build/, else lib/
    beside an installed module, else wherever the dynamic linker looks."""
    candidates = [os.environ.get("ATOLL_LIB"),
                  os.path.join(_HERE, "..", "..", "build", "libatoll.so.0"),
                  os.path.join(_HERE, "..", "..", "..", "libatoll.so.0")]
    for path in candidates:
        if path and os.path.exists(path):
            return ctypes.CDLL(os.path.abspath(path))
    try:
        return ctypes.CDLL("libatoll.so.0")
    except OSError as e:
        raise AtollError("libatoll.so.0 not found: build it with `make` (or set ATOLL_LIB)") from e


_lib = None


def library():
    """The loaded libatoll (ctypes.CDLL), its functions typed."""
    global _lib
    if _lib is not None:
        return _lib
    lib = _find_library()
    P, I, U32, U64, SZ, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_char_p
    sig = {
        "atl_open_chip": (I, [ctypes.POINTER(P), P, ctypes.POINTER(_OpenOptions)]),
        "atl_open": (I, [ctypes.POINTER(P), S, ctypes.POINTER(_OpenOptions)]),
        "atl_close": (None, [P]),
        "atl_last_error": (S, [P]),
        "atl_status_name": (S, [I]),
        "atl_load_file": (I, [P, S, ctypes.POINTER(P)]),
        "atl_unload": (I, [P]),
        "atl_nets": (I, [P, ctypes.POINTER(ctypes.POINTER(_NetInfo)), ctypes.POINTER(U32)]),
        "atl_run": (I, [P, S, ctypes.POINTER(_Buffer), U32, ctypes.POINTER(U32)]),
        "atl_output": (I, [P, S, U32, P, SZ]),
        "atl_profile": (I, [P, ctypes.POINTER(_Profile)]),
        "atl_convert": (I, [P, I, P, I, SZ, ctypes.c_char_p, SZ]),
        "atl_model_chip": (I, [S, ctypes.c_char_p, SZ, ctypes.POINTER(U64), ctypes.c_char_p, SZ]),
        "atl_compile": (I, [S, ctypes.POINTER(_CompileOptions), S, ctypes.c_char_p, SZ]),
        "atl_stats_json": (I, [P, ctypes.POINTER(ctypes.c_void_p)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def _text(b):
    return b.decode("utf-8", "replace") if b else ""


def chip_path(chip=None):
    """The config file of a chip given as a file or a name (default a1), found
    as the `atoll` command finds it: ./configs, the repository's configs, or
    the installed share/atoll/configs."""
    chip = chip or "a1"
    if os.path.exists(chip) or "/" in chip or chip.endswith(".ini"):
        return chip
    dirs = [os.path.join(os.getcwd(), "configs"), os.path.join(_HERE, "..", "..", "configs"),
            os.path.join(_HERE, "..", "..", "..", "..", "share", "atoll", "configs")]
    for d in dirs:
        f = os.path.join(d, chip + ".ini")
        if os.path.exists(f):
            return os.path.normpath(f)
    raise AtollError("chip '%s': no such file, and no chip config of that name in %s" %
                     (chip, ", ".join(os.path.normpath(d) for d in dirs)))


def compile(onnx_path, output=None, chip=None, dtype="fp32", batch=None, input_shapes=None, name=None,
            synthetic_weights=False, layer_info=True, timing_only=False):
    """Compiles an ONNX model for a chip (a file or a name, default a1) into
    output (an .abm; a temporary file when None) and returns it loaded as a
    Net. batch: an int or a list (one variant each); input_shapes: a dict
    NAME -> shape, or "NAME=1x3x224x224" strings. layer_info records each
    layer's name, op and estimate for stats()."""
    lib = library()
    cfg = chip_path(chip)
    batches = [] if batch is None else ([batch] if isinstance(batch, int) else list(batch))
    shapes = input_shapes or []
    if isinstance(shapes, dict):
        shapes = ["%s=%s" % (k, "x".join(str(int(d)) for d in v)) for k, v in shapes.items()]
    o = _CompileOptions()
    o.chip = cfg.encode()
    o.dtype = dtype.encode()
    barr = (ctypes.c_uint32 * max(1, len(batches)))(*batches)
    o.batches, o.n_batches = (barr if batches else None), len(batches)
    sarr = (ctypes.c_char_p * max(1, len(shapes)))(*[s.encode() for s in shapes])
    o.input_shapes, o.n_input_shapes = (sarr if shapes else None), len(shapes)
    o.net_name = name.encode() if name else None
    o.synthetic_weights, o.layer_info = int(synthetic_weights), int(layer_info)
    tmp = None
    if output is None:
        fd, tmp = tempfile.mkstemp(suffix=".abm")
        os.close(fd)
        output = tmp
    msg = ctypes.create_string_buffer(4096)
    s = lib.atl_compile(str(onnx_path).encode(), ctypes.byref(o), str(output).encode(), msg, len(msg))
    if s:
        if tmp:
            os.unlink(tmp)
        raise AtollError(_text(msg.value))
    try:
        return Net(output, chip=cfg, timing_only=timing_only)
    finally:
        if tmp:
            os.unlink(tmp)


def load(abm_path, chip=None, timing_only=False):
    """Loads a compiled model on a simulated chip (default: the chip it was
    compiled for). timing_only: the simulator's timing mode (cycles and
    profile as a full run gives them, no values computed)."""
    return Net(abm_path, chip=chip, timing_only=timing_only)


class Tensor:
    """An input or output of a variant: name, shape (tuple), dtype (a name)."""

    def __init__(self, t):
        self.name = _text(t.name)
        self.shape = tuple(int(t.dims[i]) for i in range(t.ndim))
        self.dtype = _NAMES.get(t.dtype, "?")
        self._code = t.dtype
        self.bytes = int(t.bytes)

    def __repr__(self):
        return "Tensor(%r, %s, %s)" % (self.name, self.shape, self.dtype)


class Net:
    """A compiled model loaded on a simulated device. run() it with numpy
    arrays; stats() gives the profile of the last run."""

    def __init__(self, abm_path, chip=None, timing_only=False):
        lib = library()
        self._lib, self._dev, self._model = lib, ctypes.c_void_p(), ctypes.c_void_p()
        abm_path = str(abm_path)
        if chip is None:
            name = ctypes.create_string_buffer(64)
            msg = ctypes.create_string_buffer(1024)
            if lib.atl_model_chip(abm_path.encode(), name, len(name), None, msg, len(msg)):
                raise AtollError(_text(msg.value))
            chip = _text(name.value)
        self.chip = chip_path(chip)
        opt = _OpenOptions()
        opt.timing_only = int(timing_only)
        self.timing_only = bool(timing_only)
        s = lib.atl_open(ctypes.byref(self._dev), self.chip.encode(), ctypes.byref(opt))
        if s == 0:
            s = lib.atl_load_file(self._dev, abm_path.encode(), ctypes.byref(self._model))
        if s:
            err = self._error(s)
            self.close()
            raise err
        nets = ctypes.POINTER(_NetInfo)()
        n = ctypes.c_uint32()
        lib.atl_nets(self._model, ctypes.byref(nets), ctypes.byref(n))
        self._nets = [nets[i] for i in range(n.value)]
        self.nets = [_text(x.name) for x in self._nets]
        self._variant = None
        self._net = None

    def _error(self, status):
        return AtollError("%s (%s)" % (_text(self._lib.atl_last_error(self._dev)), _text(self._lib.atl_status_name(status))))

    def _variants(self, net=None):
        i = self.nets.index(net) if net is not None else 0
        x = self._nets[i]
        return [x.variants[k] for k in range(x.n_variants)]

    @property
    def inputs(self):
        """Inputs of the first variant of the first net."""
        st = self._variants()[0]
        return [Tensor(st.inputs[i]) for i in range(st.n_inputs)]

    @property
    def outputs(self):
        st = self._variants()[0]
        return [Tensor(st.outputs[i]) for i in range(st.n_outputs)]

    @property
    def batches(self):
        """The batch size of each variant of the first net."""
        return [int(st.batch) for st in self._variants()]

    def run(self, inputs=None, net=None):
        """Runs net (default: the first) on inputs, a dict NAME -> array (or
        one array for a net with one input; None on a timing-only device:
        zeros of the first variant). The variant is the one whose input shapes
        match. Returns a dict NAME -> numpy array of every output."""
        lib = self._lib
        variants = self._variants(net)
        if inputs is None:
            if not self.timing_only:
                raise AtollError("run() needs inputs (only a timing-only device runs on zeros)")
            st0 = variants[0]
            inputs = {Tensor(st0.inputs[i]).name: np.zeros(Tensor(st0.inputs[i]).shape,
                                                          _NP.get(st0.inputs[i].dtype, np.uint16))
                      for i in range(st0.n_inputs)}
        if not isinstance(inputs, dict):
            names = {Tensor(st.inputs[i]).name for st in variants for i in range(st.n_inputs)}
            if len(names) != 1:
                raise AtollError("the net has %d inputs: give a dict NAME -> array" % len(names))
            inputs = {names.pop(): inputs}
        want = {}
        for st in variants:
            for i in range(st.n_inputs):
                t = Tensor(st.inputs[i])
                want.setdefault(t.name, t._code)
        bufs = (_Buffer * max(1, len(inputs)))()
        keep = []
        for k, (name, x) in enumerate(inputs.items()):
            if name not in want:
                raise AtollError("net '%s' has no input named '%s' (inputs: %s)" %
                                 (net or self.nets[0], name, ", ".join(sorted(want))))
            x = np.ascontiguousarray(x)
            if x.ndim > MAX_DIMS:
                raise AtollError("input '%s' has %d dimensions (at most %d)" % (name, x.ndim, MAX_DIMS))
            code = _OF_NP.get(x.dtype)
            if code is None:
                raise AtollError("input '%s': numpy dtype %s has no Atoll element type" % (name, x.dtype))
            if code != want[name]:
                target = _NP.get(want[name], np.uint16)   # bfloat16 is held in uint16
                y = np.empty(x.shape, target)
                msg = ctypes.create_string_buffer(512)
                if lib.atl_convert(x.ctypes.data, code, y.ctypes.data, want[name], x.size, msg, len(msg)):
                    raise AtollError("input '%s': %s" % (name, _text(msg.value)))
                x = y
            keep.append(x)
            b = bufs[k]
            b.name, b.data, b.size, b.ndim = name.encode(), x.ctypes.data, x.nbytes, x.ndim
            for d in range(x.ndim):
                b.dims[d] = x.shape[d]
        chosen = ctypes.c_uint32()
        s = lib.atl_run(self._model, net.encode() if net else None, bufs, len(inputs), ctypes.byref(chosen))
        if s:
            raise self._error(s)
        st = variants[chosen.value]
        self._variant, self._net = st, net
        out = {}
        for i in range(st.n_outputs):
            t = Tensor(st.outputs[i])
            y = np.empty(t.shape, _NP.get(t._code, np.uint16))
            s = lib.atl_output(self._model, t.name.encode(), 0, y.ctypes.data, y.nbytes)
            if s:
                raise self._error(s)
            if t._code == BF16:   # numpy has no bfloat16: widened to float32 (exact)
                f = np.empty(t.shape, np.float32)
                lib.atl_convert(y.ctypes.data, BF16, f.ctypes.data, FP32, y.size, None, 0)
                y = f
            out[t.name] = y
        return out

    def stats(self):
        """The profile of the last run: cycles, firmware cycles, seconds at
        the chip clock, MACs, DRAM bytes, per-engine busy/stall/utilisation,
        one dict per layer (with the compiler's name, op and estimate
        when the model was compiled with layer_info; a layer group's
        "members", each with its share of the group's cycles: they add up
        to the group's), and one per stage of
        a staged schedule (its layers, micro-batch, cycles, matrix-unit
        utilisation)."""
        p = _Profile()
        s = self._lib.atl_profile(self._model, ctypes.byref(p))
        if s:
            raise self._error(s)
        rows = {}
        st = self._variant
        if st is not None:
            for i in range(st.n_layers):
                rows[int(st.layers[i].layer)] = st.layers[i]
        layers = []
        for i in range(p.n_layers):
            l = p.layers[i]
            d = dict(id=int(l.layer), **_layer_dict(l, rows.get(int(l.layer))))
            # a layer group's members: member tag 0x8000 + 16 x layer + member keys their rows
            d["members"] = [dict(member=int(m.member), **_layer_dict(m, rows.get(0x8000 | int(l.layer) << 4 | int(m.member))))
                            for m in (p.members[k] for k in range(p.n_members)) if m.layer == l.layer]
            layers.append(d)
        stages = []
        for i in range(p.n_stages):
            g, r = p.stages[i], st.stages[i]
            stages.append({
                "stage": int(g.stage), "layers": (int(r.first_layer), int(r.first_layer + r.n_layers - 1)),
                "micro_batch": int(r.micro_batch), "instances": int(r.instances), "cores": int(r.cores),
                "input": _text(r.input), "est_cycles": int(r.est_cycles), "cycles": int(g.cycles),
                "first": int(g.first), "last": int(g.last), "held": int(g.held), "macs": int(g.macs),
                "dram_bytes": int(g.dram_bytes), "mac_util": g.mac_util})
        return {
            "cycles": int(p.cycles), "firmware_cycles": int(p.fw_cycles), "seconds": p.seconds,
            "macs": int(p.macs), "dram_bytes": int(p.dram_bytes), "cores": int(p.cores),
            "engines": {ENGINES[g]: {"busy": int(p.busy[g]), "stall": int(p.stall[g]),
                                     "utilisation": p.utilisation[g]} for g in range(3)},
            "layers": layers, "stages": stages,
        }

    def close(self):
        """Unloads the model and closes the device (also on garbage collection)."""
        if getattr(self, "_model", None):
            self._lib.atl_unload(self._model)
            self._model = None
        if getattr(self, "_dev", None):
            self._lib.atl_close(self._dev)
            self._dev = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

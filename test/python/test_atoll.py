"""test_atoll.py - the Python module (python/atoll) over libatoll.so on the
models the C API and the CLI tests use: compile, run against PyTorch's
outputs, input conversion (float64, bfloat16), stats with the compiler's
layer rows, timing-only runs with the same cycles, the stages of a staged
schedule (compiled by the atoll beside the library), and the errors.

Run by test/cli/python.sh: PYTHONPATH=python ATOLL_LIB=BUILD/libatoll.so.0
python3 test/python/test_atoll.py; prints "python: N passed, N failed".
"""
import os
import subprocess
import sys
import tempfile
import traceback

import numpy as np

import atoll

passed = failed = 0
TMP = tempfile.mkdtemp()


def test(fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print("ok", fn.__name__)
    except Exception:
        failed += 1
        print("not ok", fn.__name__)
        print("  FAIL " + traceback.format_exc().replace("\n", "\n  "))
    return fn


def ref(model):
    d = np.load("models/%s.ref.npz" % model)
    return d["input"], d["output"]


def close(got, want, tol=1e-4):
    return np.max(np.abs(got - want)) <= tol * max(1.0, float(np.max(np.abs(want))))


@test
def compile_run_matches_pytorch():
    x, y = ref("digits_cnn")
    with atoll.compile("models/digits_cnn.onnx", chip="tiny", batch=1) as net:
        assert [t.name for t in net.inputs] == ["input"]
        assert net.inputs[0].shape == (1, 1, 8, 8) and net.inputs[0].dtype == "float32"
        out = net.run({"input": x})
        assert set(out) == {"output"} and out["output"].dtype == np.float32
        assert close(out["output"], y), np.max(np.abs(out["output"] - y))
        # one array for a one-input net
        assert close(net.run(x)["output"], y)


@test
def stats_have_layer_names_and_estimates():
    x, _ = ref("resnet20_cifar")
    with atoll.compile("models/resnet20_cifar.onnx", chip="a1") as net:
        net.run({"input": x})
        s = net.stats()
        assert s["cycles"] > 0 and s["macs"] > 0 and s["dram_bytes"] > 0 and s["cores"] == 16
        assert set(s["engines"]) == {"dma", "matrix", "vector"}
        assert 0 < s["engines"]["matrix"]["utilisation"] <= 1
        # every one of its 21 convolutions is a layer or a member of a group (op "Group(n)")
        convs = sum(1 if l["op"].startswith("Conv") else int(l["op"][6:-1]) if l["op"].startswith("Group(") else 0
                    for l in s["layers"] if l["op"])
        assert convs == 21, [l["op"] for l in s["layers"]]
        first = s["layers"][0]
        assert first["name"].startswith("/stem"), first["name"]
        assert first["bound"] in ("compute", "dma", "sync")
        assert first["est_cycles"] > 0 and first["cycles"] > 0
        # the estimate is close to the simulated span (the cost model's claim)
        assert abs(first["est_cycles"] - first["cycles"]) <= 0.2 * first["cycles"]


@test
def float64_input_converted():
    x, y = ref("lenet5")
    with atoll.compile("models/lenet5.onnx", chip="a1") as net:
        out = net.run({"input": x.astype(np.float64)})
        assert close(out["output"], y)


@test
def bf16_model_takes_float32_and_returns_float32():
    # lenet5: the conversions do not depend on the model (resnet20_cifar's
    # compile took 7 CPU-s of python.sh's 19 under ASan)
    x, y = ref("lenet5")
    with atoll.compile("models/lenet5.onnx", chip="a1", dtype="bf16") as net:
        assert net.inputs[0].dtype == "bfloat16"
        out = net.run({"input": x})["output"]
        assert out.dtype == np.float32
        cos = float(np.dot(out.ravel(), y.ravel()) / (np.linalg.norm(out) * np.linalg.norm(y)))
        assert cos > 0.99, cos


@test
def timing_only_same_cycles():
    x, _ = ref("digits_cnn")
    path = os.path.join(TMP, "d.abm")
    atoll.compile("models/digits_cnn.onnx", path, chip="tiny", batch=[1, 4]).close()
    with atoll.load(path) as full, atoll.load(path, timing_only=True) as timing:
        assert full.batches == [1, 4]
        full.run({"input": x})
        timing.run({"input": x})
        a, b = full.stats(), timing.stats()
        assert a["cycles"] == b["cycles"] and a["macs"] == b["macs"]
        assert [l["cycles"] for l in a["layers"]] == [l["cycles"] for l in b["layers"]]
        timing.run()                       # zeros of the first variant
        assert timing.stats()["cycles"] == a["cycles"]
        # batch 4 picks the second variant
        full.run({"input": np.repeat(x, 4, axis=0)})
        assert full.stats()["cycles"] != a["cycles"]


@test
def fixed_batch_export_at_batch_4():
    # lenet5, exported at batch 1 as resnet20_cifar is (whose compile took
    # 5 CPU-s under ASan)
    x, y = ref("lenet5")
    with atoll.compile("models/lenet5.onnx", chip="a1", batch=4) as net:
        xs = np.concatenate([x, 2 * x, -x, x])
        out = net.run({"input": xs})["output"]
        assert out.shape == (4, 10)
        assert close(out[0], y[0]) and close(out[3], y[0])
    # encoder_block fixes batch 1 in its attention's Reshape targets, which
    # follow batch=4 (compiler/ops/batch_follow.c)
    x, y = ref("encoder_block")
    with atoll.compile("models/encoder_block.onnx", chip="a1", batch=4) as net:
        out = net.run({"input": np.concatenate([x, 2 * x, -x, x])})["output"]
        assert out.shape == (4,) + y.shape[1:]
        assert close(out[0], y[0]) and close(out[3], y[0])


@test
def group_members_in_stats():
    # digits_cnn on a1: one layer group of three members
    with atoll.compile("models/digits_cnn.onnx", chip="a1", timing_only=True) as net:
        net.run()
        g = net.stats()["layers"][0]
        ms = g["members"]
        assert [m["member"] for m in ms] == [0, 1, 2] and ms[0]["name"] == "/features/features.0/Conv"
        for k in ("cycles", "held", "macs", "instructions", "dram_bytes"):
            assert sum(m[k] for m in ms) == g[k], k
        assert sum(m["busy"]["matrix"] for m in ms) == g["busy"]["matrix"] and g["held"] > 0


@test
def stages_of_a_staged_schedule():
    # the atoll of python.sh ($ATOLL: in a test pass, test/cli/cached_atoll,
    # which takes this compile from placement.sh's), else the library's
    exe = os.environ.get("ATOLL_EXE") or os.path.join(os.path.dirname(os.environ.get("ATOLL_LIB", "build/libatoll.so.0")), "atoll")
    path = os.path.join(TMP, "s.abm")
    # the binary brings its own sanitizer runtime: not the one preloaded into
    # python, nor python's options for it (leaks found in python itself are not ours)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    subprocess.run([exe, "compile", "models/resnet20_cifar.onnx", "--chip", "configs/a1.ini", "--batch", "8", "--stage-plan",
                    "1,/stages/stages.5/relu_1/Relu_output_0:2", "--stages", "-o", path], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.STDOUT, env=env)
    with atoll.load(path, timing_only=True) as net:
        net.run()
        s = net.stats()
        st = s["stages"]
        assert [(g["stage"], g["micro_batch"], g["instances"], g["cores"]) for g in st] == [(0, 1, 8, 16), (1, 2, 4, 16)]
        assert st[0]["layers"][0] == 0 and st[1]["layers"][0] == st[0]["layers"][1] + 1
        assert st[1]["input"] == "/stages/stages.5/relu_1/Relu_output_0"
        assert sum(g["macs"] for g in st) == s["macs"] and sum(g["cycles"] for g in st) <= s["cycles"]
        assert all(0 < g["mac_util"] <= 1 and g["held"] > 0 for g in st)
        assert sum(l["held"] for l in s["layers"]) <= s["cycles"] * s["cores"]


@test
def errors_name_the_cause():
    def raises(fn, text):
        try:
            fn()
        except atoll.AtollError as e:
            assert text in str(e), str(e)
            return
        raise AssertionError("no AtollError for " + text)
    raises(lambda: atoll.compile("models/lenet5.onnx", chip="a2"), "chip 'a2': no such file")
    raises(lambda: atoll.compile("test/data/unsupported.onnx", chip="tiny"), "op 'FancyOp' (opset 13) is not supported")
    raises(lambda: atoll.compile("models/encoder_block.onnx", chip="tiny", input_shapes={"input": (4, 16, 64)}),
           "the graph itself depends")
    with atoll.compile("models/lenet5.onnx", chip="tiny") as net:
        raises(lambda: net.run({"nope": np.zeros(3, np.float32)}), "has no input named 'nope'")
        raises(lambda: net.run({"input": np.zeros((1, 1, 32, 32), np.int32)}), "cannot be converted")
        raises(lambda: net.run({"input": np.zeros((2, 1, 32, 32), np.float32)}), "no variant of net")
        raises(lambda: net.run(), "needs inputs")
    path = os.path.join(TMP, "l.abm")
    atoll.compile("models/lenet5.onnx", path, chip="a1").close()
    raises(lambda: atoll.load(path, chip="tiny"), "compiled for chip 'a1'")


print("python: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)

#!/usr/bin/python3
"""Regenerate the Atoll model zoo: ONNX graphs and PyTorch reference data.

Why this exists: the compiler, the reference interpreter and the simulator need
a fixed set of real networks with known-good outputs to test against. This
script builds every network in PyTorch, exports it to ONNX (opset 13), checks
that the graph uses only operators the Atoll front end supports, and writes the
inputs and PyTorch outputs beside it as .npz files whose array names are the
ONNX graph input/output names.

Three kinds of model (see models/README.md for the table):
  - digits_cnn: a small CNN trained here on scikit-learn's bundled 8x8 digits,
    with its held-out test set, reference outputs and accuracy;
  - small architectures with committed (random, seeded) weights and reference
    outputs: lenet5, resnet20_cifar, mobilenetv2_035, encoder_block, vit_tiny;
  - full-size architectures whose committed .onnx holds only the graph; their
    weights go to <name>.onnx.data (ONNX external data, git-ignored):
    resnet50, mobilenetv2_100, bert_base_layer, vit_b16.

Everything is deterministic: fixed seeds per model (independent of which
models are generated in one run), one CPU thread, deterministic algorithms,
and .npz files written with a fixed zip timestamp. Running the script twice
gives byte-identical files (check with models/check.py --compare DIR).

Usage:
  /usr/bin/python3 models/generate.py                 # everything into models/
  /usr/bin/python3 models/generate.py --only lenet5   # one model
  /usr/bin/python3 models/generate.py --out /tmp/zoo  # somewhere else

Only /usr/bin/python3 (Debian: torch 1.13, torchvision 0.14, onnx 1.12,
scikit-learn 1.2, numpy) has the needed packages.
"""

import argparse
import hashlib
import io
import json
import math
import os
import sys
import warnings
import zipfile

import numpy as np
import torch
import torch.nn as nn
import torchvision
import onnx
from onnx import external_data_helper, numpy_helper

OPSET = 13

# Operators the Atoll ONNX front end accepts. Export fails on anything else.
SUPPORTED_OPS = frozenset("""
Conv ConvTranspose Gemm MatMul Add Sub Mul Div Pow Sqrt Reciprocal Exp Log Neg
Abs Relu LeakyRelu PRelu Elu Selu Sigmoid Tanh HardSigmoid HardSwish Clip Erf
Softmax LogSoftmax MaxPool AveragePool GlobalAveragePool GlobalMaxPool
BatchNormalization InstanceNormalization LayerNormalization LRN Concat Split
Slice Reshape Flatten Transpose Squeeze Unsqueeze Identity Dropout Constant
Shape Gather Cast ReduceMean ReduceSum ReduceMax ReduceMin Resize Upsample Pad
Max Min Sum Mean Where Equal Less Greater Not ConstantOfShape Range Expand Tile
Floor Ceil DepthToSpace SpaceToDepth
""".split())

HERE = os.path.dirname(os.path.abspath(__file__))

# Fixed zip member timestamp so .npz bytes do not depend on the clock.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


# ---------------------------------------------------------------------------
# Determinism and file helpers
# ---------------------------------------------------------------------------

def set_deterministic():
    """One thread and deterministic kernels: same bits on every run."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.backends.mkldnn.enabled = False


def seed_all(seed):
    """Seed torch's global generator; every model builder calls this first."""
    torch.manual_seed(seed)
    np.random.seed(seed)


def save_npz(path, arrays):
    """Write arrays like numpy.savez (stored, zip64, .npy members) but with a
    fixed timestamp, so equal arrays give equal bytes. Names keep dict order."""
    tmp = path + ".tmp.npz"
    with zipfile.ZipFile(tmp, mode="w", compression=zipfile.ZIP_STORED) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.ascontiguousarray(value),
                                          allow_pickle=False)
    os.replace(tmp, path)


def write_bytes(path, data):
    """Write a file through a temporary name, so a failure leaves no partial file."""
    tmp = path + ".tmp.part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------
# Architectures written here (torchvision provides ResNet-50 and MobileNetV2)
# ---------------------------------------------------------------------------

class DigitsCNN(nn.Module):
    """8x8 digits classifier: two 3x3 conv+BN+ReLU, 2x2 max pool, two FC."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class LeNet5(nn.Module):
    """Classic LeNet-5 on 32x32: 5x5 conv, tanh, 2x2 average pool, three FC."""

    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5), nn.Tanh(), nn.AvgPool2d(2),
            nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Tanh(),
            nn.Linear(120, 84), nn.Tanh(), nn.Linear(84, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


class BasicBlock(nn.Module):
    """ResNet basic block; 1x1 conv + BN projection when the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + self.shortcut(x))


class ResNetCifar(nn.Module):
    """CIFAR ResNet (He et al. 2016, sec. 4.2): 3 stages of 16/32/64 channels,
    n basic blocks each (n=3 gives ResNet-20), global average pool, FC."""

    def __init__(self, blocks_per_stage=3, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU())
        layers, cin = [], 16
        for i, cout in enumerate((16, 32, 64)):
            for j in range(blocks_per_stage):
                layers.append(BasicBlock(cin, cout, 2 if (i > 0 and j == 0) else 1))
                cin = cout
        self.stages = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.pool(self.stages(self.stem(x)))
        return self.fc(torch.flatten(x, 1))


class SelfAttention(nn.Module):
    """Multi-head self-attention written with plain MatMul/Softmax (no
    nn.MultiheadAttention, whose export is not guaranteed to stay within the
    supported operators). fused_qkv=True is the ViT layout (one projection,
    split by indexing); False is the BERT layout (three projections)."""

    def __init__(self, dim, heads, fused_qkv):
        super().__init__()
        assert dim % heads == 0
        self.heads, self.head_dim, self.fused = heads, dim // heads, fused_qkv
        if fused_qkv:
            self.qkv = nn.Linear(dim, 3 * dim)
        else:
            self.query = nn.Linear(dim, dim)
            self.key = nn.Linear(dim, dim)
            self.value = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        if self.fused:
            qkv = self.qkv(x).reshape(b, s, 3, self.heads, self.head_dim)
            qkv = qkv.permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            q = q * (self.head_dim ** -0.5)
            scores = torch.matmul(q, k.transpose(-2, -1))
        else:
            def heads(t):
                return t.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)
            q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d)
        return self.out(ctx)


class EncoderBlock(nn.Module):
    """Transformer encoder layer: attention + GELU FFN, each with a residual
    and LayerNorm. pre_norm=False is BERT's post-LN, True is ViT's pre-LN."""

    def __init__(self, dim, heads, ffn, pre_norm, fused_qkv, eps):
        super().__init__()
        self.pre_norm = pre_norm
        self.attn = SelfAttention(dim, heads, fused_qkv)
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.ffn = nn.Sequential(nn.Linear(dim, ffn), nn.GELU(), nn.Linear(ffn, dim))
        self.norm2 = nn.LayerNorm(dim, eps=eps)

    def forward(self, x, mask=None):
        if self.pre_norm:
            x = x + self.attn(self.norm1(x), mask)
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.attn(x, mask))
        return self.norm2(x + self.ffn(x))


class ViT(nn.Module):
    """Vision Transformer (Dosovitskiy et al. 2021): conv patch embedding,
    class token, learned position embedding, pre-LN blocks, head on the class
    token. ViT-B/16 is ViT(224, 16, 768, 12, 12, 3072, 1000)."""

    def __init__(self, image, patch, dim, depth, heads, mlp, classes):
        super().__init__()
        tokens = (image // patch) ** 2 + 1
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.ModuleList(
            EncoderBlock(dim, heads, mlp, pre_norm=True, fused_qkv=True, eps=1e-6)
            for _ in range(depth))
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


class BertLayer(nn.Module):
    """One BERT encoder layer (post-LN, GELU, eps 1e-12) with HF's additive
    attention mask input of shape [batch, 1, 1, seq] (0 keep, -10000 drop)."""

    def __init__(self, dim=768, heads=12, ffn=3072):
        super().__init__()
        self.layer = EncoderBlock(dim, heads, ffn, pre_norm=False,
                                  fused_qkv=False, eps=1e-12)

    def forward(self, hidden_states, attention_mask):
        return self.layer(hidden_states, attention_mask)


# ---------------------------------------------------------------------------
# Making random weights non-trivial
# ---------------------------------------------------------------------------

def randomize_norms(model, gen):
    """Give BatchNorm/LayerNorm affine parameters non-default values (gamma in
    [0.5, 1.5], small beta) so folding and normalisation are really tested."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)) and m.weight is not None:
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


def calibrate_batchnorm(model, input_shape, gen, steps=4):
    """Set BatchNorm running mean/var to the exact averages over a few random
    batches (momentum=None = cumulative average), so eval-mode BN is neither
    the identity nor degenerate. Leaves the model in eval mode."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(steps):
            model(torch.randn(input_shape, generator=gen))
    for bn in bns:
        bn.momentum = 0.1
    model.eval()


def randomize_bn_stats(model, gen):
    """Cheap stand-in for calibrate_batchnorm on full-size models: random
    running mean (N(0, 0.1)) and variance (U[0.5, 1.5]). Besides making the
    statistics non-trivial this keeps every initializer distinct; otherwise
    the exporter deduplicates equal tensors into Identity nodes (e.g.
    running_var = Identity(weight)), which synthetic weights would break."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)


def random_input(shape, seed):
    """Reference input: standard normal float32 from a seeded numpy generator."""
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------
# Model builders. Each returns a spec dict; check.py rebuilds through these.
#   module: eval-mode torch module
#   inputs: dict ONNX input name -> numpy reference input (export example)
#   outputs: list of ONNX output names
#   dynamic_axes: for torch.onnx.export, or None
#   full: True for graph-only models (weights external, no reference data)
# ---------------------------------------------------------------------------

DIGITS_TEST_SIZE = 360      # 20% of the 1797 images
DIGITS_SPLIT_SEED = 0


def digits_data():
    """scikit-learn digits, scaled to [0, 1] (pixel / 16), shape N x 1 x 8 x 8,
    with a fixed stratified split. Returns (x_train, y_train, x_test, y_test)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    images, labels = load_digits(return_X_y=True)
    images = (images / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    labels = labels.astype(np.int64)
    index = np.arange(len(labels))
    train, test = train_test_split(index, test_size=DIGITS_TEST_SIZE,
                                   random_state=DIGITS_SPLIT_SEED, stratify=labels)
    return images[train], labels[train], images[test], labels[test]


def build_digits_cnn():
    seed_all(1)
    x_train, y_train, x_test, y_test = digits_data()
    model = DigitsCNN()
    gen = torch.Generator().manual_seed(1)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, weight_decay=1e-4)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    model.train()
    for _ in range(30):                                   # ~1300 steps, seconds
        order = torch.randperm(len(yt), generator=gen)
        for i in range(0, len(yt), 32):
            batch = order[i:i + 32]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xt[batch]), yt[batch])
            loss.backward()
            opt.step()
    model.eval()
    return dict(module=model, inputs={"input": x_test[:1]}, outputs=["output"],
                dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                full=False, test=(x_test, y_test),
                about="CNN trained on sklearn digits (8x8); dynamic batch")


def build_lenet5():
    seed_all(2)
    model = LeNet5().eval()
    return dict(module=model, inputs={"input": random_input((1, 1, 32, 32), 102)},
                outputs=["output"], dynamic_axes=None, full=False,
                about="LeNet-5, 32x32 grey input, tanh + average pooling")


def build_resnet20_cifar():
    seed_all(3)
    model = ResNetCifar(3)
    gen = torch.Generator().manual_seed(3)
    randomize_norms(model, gen)
    calibrate_batchnorm(model, (8, 3, 32, 32), gen)
    return dict(module=model, inputs={"input": random_input((1, 3, 32, 32), 103)},
                outputs=["output"], dynamic_axes=None, full=False,
                about="CIFAR ResNet-20: 3 stages x 3 basic blocks, BN, residual Add")


def build_mobilenetv2_035():
    seed_all(4)
    model = torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=10)
    gen = torch.Generator().manual_seed(4)
    randomize_norms(model, gen)
    calibrate_batchnorm(model, (8, 3, 96, 96), gen)
    return dict(module=model, inputs={"input": random_input((1, 3, 96, 96), 104)},
                outputs=["output"], dynamic_axes=None, full=False,
                about="torchvision MobileNetV2 width 0.35, 96x96, 10 classes: "
                      "depthwise conv, ReLU6 (Clip), inverted residuals")


def build_encoder_block():
    seed_all(5)
    model = EncoderBlock(64, 4, 256, pre_norm=False, fused_qkv=False, eps=1e-5)
    randomize_norms(model, torch.Generator().manual_seed(5))
    model.eval()
    return dict(module=model, inputs={"input": random_input((1, 16, 64), 105)},
                outputs=["output"], dynamic_axes=None, full=False,
                about="post-LN transformer encoder layer: seq 16, d 64, 4 heads, "
                      "FFN 256, GELU")


def build_vit_tiny():
    seed_all(6)
    model = ViT(image=32, patch=4, dim=64, depth=3, heads=4, mlp=128, classes=10)
    randomize_norms(model, torch.Generator().manual_seed(6))
    model.eval()
    return dict(module=model, inputs={"input": random_input((1, 3, 32, 32), 106)},
                outputs=["output"], dynamic_axes=None, full=False,
                about="tiny ViT: 32x32, patch 4 (64+1 tokens), dim 64, 3 pre-LN "
                      "layers, 4 heads, MLP 128")


def full_size_norms(model, seed):
    """Non-trivial norm parameters and BN statistics for graph-only models."""
    gen = torch.Generator().manual_seed(seed)
    randomize_norms(model, gen)
    randomize_bn_stats(model, gen)


def build_resnet50():
    seed_all(7)
    model = torchvision.models.resnet50(weights=None).eval()
    full_size_norms(model, 7)
    return dict(module=model, inputs={"input": np.zeros((1, 3, 224, 224), np.float32)},
                outputs=["output"], dynamic_axes=None, full=True,
                about="torchvision ResNet-50, 224x224, 1000 classes")


def build_mobilenetv2_100():
    seed_all(8)
    model = torchvision.models.mobilenet_v2(weights=None).eval()
    full_size_norms(model, 8)
    return dict(module=model, inputs={"input": np.zeros((1, 3, 224, 224), np.float32)},
                outputs=["output"], dynamic_axes=None, full=True,
                about="torchvision MobileNetV2 width 1.0, 224x224, 1000 classes")


def build_bert_base_layer():
    seed_all(9)
    model = BertLayer().eval()
    full_size_norms(model, 9)
    return dict(module=model,
                inputs={"hidden_states": np.zeros((1, 128, 768), np.float32),
                        "attention_mask": np.zeros((1, 1, 1, 128), np.float32)},
                outputs=["output"], dynamic_axes=None, full=True,
                about="one BERT-base encoder layer: seq 128, hidden 768, 12 heads, "
                      "FFN 3072, additive attention mask")


def build_vit_b16():
    seed_all(10)
    model = ViT(image=224, patch=16, dim=768, depth=12, heads=12, mlp=3072,
                classes=1000).eval()
    full_size_norms(model, 10)
    return dict(module=model, inputs={"input": np.zeros((1, 3, 224, 224), np.float32)},
                outputs=["output"], dynamic_axes=None, full=True,
                about="ViT-B/16, 224x224 (196+1 tokens), 12 layers, dim 768, 12 heads")


BUILDERS = {
    "digits_cnn": build_digits_cnn,
    "lenet5": build_lenet5,
    "resnet20_cifar": build_resnet20_cifar,
    "mobilenetv2_035": build_mobilenetv2_035,
    "encoder_block": build_encoder_block,
    "vit_tiny": build_vit_tiny,
    "resnet50": build_resnet50,
    "mobilenetv2_100": build_mobilenetv2_100,
    "bert_base_layer": build_bert_base_layer,
    "vit_b16": build_vit_b16,
}

FULL_DIR = "full"   # full-size graphs live in models/full/


def build(name):
    """Build model `name` deterministically (used by generate and check)."""
    set_deterministic()
    return BUILDERS[name]()


def run_torch(module, inputs):
    """Run the module on numpy inputs (in ONNX input order), return numpy outputs."""
    with torch.no_grad():
        out = module(*[torch.from_numpy(v) for v in inputs.values()])
    if isinstance(out, torch.Tensor):
        out = (out,)
    return [o.numpy() for o in out]


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------

def export_onnx(spec):
    """Export spec['module'] to an in-memory ModelProto (opset 13, eval mode,
    BatchNormalization kept as nodes: TrainingMode.PRESERVE on an eval-mode
    module skips the exporter's own Conv+BN fusion)."""
    args = tuple(torch.from_numpy(v) for v in spec["inputs"].values())
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(spec["module"], args, buf, export_params=True,
                          opset_version=OPSET, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          input_names=list(spec["inputs"]),
                          output_names=spec["outputs"],
                          dynamic_axes=spec["dynamic_axes"])
    return onnx.load_from_string(buf.getvalue())


def op_counts(model):
    counts = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def check_ops(name, model):
    bad = sorted(set(op_counts(model)) - SUPPORTED_OPS)
    if bad:
        raise SystemExit("%s: unsupported ONNX operators %s" % (name, ", ".join(bad)))


def is_weight(tensor):
    """Initializers that go to external data: floating-point tensors with more
    than one element. Integer tensors (Reshape shapes, axes, indices) and
    scalars (Clip bounds, scale factors) define the computation, so they stay
    in the graph and a compiler filling weights synthetically still works."""
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
              onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE)
    return tensor.data_type in floats and int(np.prod(tensor.dims)) > 1


def externalize(model, data_path, location):
    """Move weight initializers into `data_path` (64-byte aligned, graph order)
    and point the tensors at it by relative `location`."""
    tmp = data_path + ".tmp.part"
    with open(tmp, "wb") as f:
        for tensor in model.graph.initializer:
            if not is_weight(tensor):
                continue
            if not tensor.HasField("raw_data"):
                tensor.raw_data = numpy_helper.to_array(tensor).tobytes()
                del tensor.float_data[:]
            pad = -f.tell() % 64
            f.write(b"\0" * pad)
            offset = f.tell()
            f.write(tensor.raw_data)
            external_data_helper.set_external_data(tensor, location, offset,
                                                   len(tensor.raw_data))
            tensor.ClearField("raw_data")
    os.replace(tmp, data_path)


def value_info_shapes(values):
    """[{name, dtype, shape}] of graph inputs/outputs; dynamic dims as strings."""
    out = []
    for v in values:
        t = v.type.tensor_type
        dims = [d.dim_param if d.dim_param else d.dim_value for d in t.shape.dim]
        out.append(dict(name=v.name, dtype=onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[
            t.elem_type].name, shape=dims))
    return out


def write_digits_extras(spec, outdir, onnx_outputs):
    """Test set, full-test-set reference outputs and accuracy for digits_cnn."""
    x_test, y_test = spec["test"]
    logits = run_torch(spec["module"], {"input": x_test})[0]
    pred = logits.argmax(axis=1).astype(np.int64)
    correct = int((pred == y_test).sum())
    save_npz(os.path.join(outdir, "digits_cnn.test.npz"),
             {"input": x_test, onnx_outputs[0]: logits, "labels": y_test})
    info = {
        "model": "digits_cnn.onnx",
        "dataset": "sklearn.datasets.load_digits, pixels / 16.0, N x 1 x 8 x 8",
        "split": "sklearn train_test_split(test_size=%d, random_state=%d, "
                 "stratify=labels)" % (DIGITS_TEST_SIZE, DIGITS_SPLIT_SEED),
        "num_test_images": int(len(y_test)),
        "correct": correct,
        "accuracy": round(correct / len(y_test), 6),
    }
    text = json.dumps(info, indent=2)[:-2]
    # Per-image lists on one line each to keep the file readable.
    text += ',\n  "labels": %s,\n  "predicted": %s\n}\n' % (
        json.dumps(y_test.tolist()), json.dumps(pred.tolist()))
    write_bytes(os.path.join(outdir, "digits_cnn.json"), text.encode())
    return info


def generate(name, outdir):
    """Build, export, check and write one model; return its manifest entry."""
    print("%-16s building" % name, flush=True)
    spec = build(name)
    model = export_onnx(spec)
    check_ops(name, model)
    onnx.checker.check_model(model)
    entry = dict(name=name, about=spec["about"], opset=OPSET,
                 params=int(sum(p.numel() for p in spec["module"].parameters())),
                 inputs=value_info_shapes(model.graph.input),
                 outputs=value_info_shapes(model.graph.output),
                 ops=op_counts(model), nodes=len(model.graph.node), files={})
    files = []
    if spec["full"]:
        subdir = os.path.join(outdir, FULL_DIR)
        os.makedirs(subdir, exist_ok=True)
        onnx_path = os.path.join(subdir, name + ".onnx")
        location = name + ".onnx.data"
        externalize(model, os.path.join(subdir, location), location)
        write_bytes(onnx_path, model.SerializeToString())
        entry["external_data"] = os.path.join(FULL_DIR, location)
        entry["external_data_bytes"] = os.path.getsize(os.path.join(subdir, location))
        files.append(onnx_path)
    else:
        onnx_path = os.path.join(outdir, name + ".onnx")
        write_bytes(onnx_path, model.SerializeToString())
        files.append(onnx_path)
        names = [o["name"] for o in entry["outputs"]]
        outputs = run_torch(spec["module"], spec["inputs"])
        ref = dict(spec["inputs"])
        ref.update(zip(names, outputs))
        ref_path = os.path.join(outdir, name + ".ref.npz")
        save_npz(ref_path, ref)
        files.append(ref_path)
        if name == "digits_cnn":
            info = write_digits_extras(spec, outdir, names)
            entry["accuracy"] = info["accuracy"]
            entry["num_test_images"] = info["num_test_images"]
            files += [os.path.join(outdir, "digits_cnn.test.npz"),
                      os.path.join(outdir, "digits_cnn.json")]
    for path in files:
        rel = os.path.relpath(path, outdir)
        entry["files"][rel] = dict(bytes=os.path.getsize(path), sha256=sha256_file(path))
    print("%-16s %d nodes, %s, %d params%s" % (
        name, entry["nodes"], " ".join(entry["ops"]), entry["params"],
        ", accuracy %.4f" % entry["accuracy"] if "accuracy" in entry else ""),
        flush=True)
    return entry


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="output directory (default: models/)")
    ap.add_argument("--only", action="append", choices=sorted(BUILDERS),
                    help="generate only this model (repeatable); the manifest "
                         "is then updated for these models only")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {}
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = {m["name"]: m for m in json.load(f)["models"]}
    for name in args.only or BUILDERS:
        manifest[name] = generate(name, args.out)
    ordered = [manifest[n] for n in BUILDERS if n in manifest]
    doc = {"generator": "models/generate.py", "opset": OPSET,
           "torch": torch.__version__.split("+")[0], "onnx": onnx.__version__,
           "models": ordered}
    write_bytes(manifest_path, (json.dumps(doc, indent=1) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())

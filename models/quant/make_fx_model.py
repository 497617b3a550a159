#!/usr/bin/python3
"""make_fx_model.py - a small CNN quantised by PyTorch's own post-training
quantisation (torch.ao.quantization, FX graph mode, the onednn config (the
fbgemm one of Debian's torch is not built): per-channel symmetric int8
weights, uint8 activations with zero points),
exported to ONNX, with its input and PyTorch's int8 output.

Writes, next to this script:
  fx_cnn.q.onnx     the exported quantised model (QDQ / QLinear form as
                    torch.onnx writes it)
  fx_cnn.ref.npz    'input' (1x3x16x16 float32) and 'output' (PyTorch's
                    quantised model on it, float32), plus 'float_output'
                    (the float model's)

Run with Debian's python3 (python3-torch 1.13, python3-onnx, numpy); no
network. Deterministic: fixed seeds, one thread. test/cli/quantize.sh
compiles and runs the committed files; the script only regenerates them.
"""
import io
import os
import zipfile

import numpy as np
import torch
import torch.nn as nn
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import prepare_fx, convert_fx

HERE = os.path.dirname(os.path.abspath(__file__))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(self.relu1(self.bn1(self.conv1(x))))
        x = self.relu2(self.conv2(x))
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)


def save_npz(path, arrays):
    """np.savez with a fixed timestamp (its bytes then never change)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, a in arrays.items():
            buf = io.BytesIO()
            np.save(buf, a)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, buf.getvalue())


def main():
    torch.manual_seed(7)
    torch.set_num_threads(1)
    torch.backends.quantized.engine = "onednn"
    model = Net().eval()
    with torch.no_grad():   # non-trivial BatchNorm statistics
        model.bn1.running_mean.uniform_(-0.2, 0.2)
        model.bn1.running_var.uniform_(0.5, 1.5)
    gen = torch.Generator().manual_seed(11)
    calib = [torch.rand(1, 3, 16, 16, generator=gen) * 2 - 1 for _ in range(16)]
    example = (calib[0],)
    prepared = prepare_fx(model, get_default_qconfig_mapping("onednn"), example)
    with torch.no_grad():
        for x in calib:
            prepared(x)
    quantized = convert_fx(prepared)
    x = torch.rand(1, 3, 16, 16, generator=gen) * 2 - 1
    with torch.no_grad():
        out_q = quantized(x)
        out_f = model(x)
    torch.onnx.export(quantized, (x,), os.path.join(HERE, "fx_cnn.q.onnx"), opset_version=13,
                      input_names=["input"], output_names=["output"])
    save_npz(os.path.join(HERE, "fx_cnn.ref.npz"),
             {"input": x.numpy().astype(np.float32), "output": out_q.numpy().astype(np.float32),
              "float_output": out_f.numpy().astype(np.float32)})


if __name__ == "__main__":
    main()

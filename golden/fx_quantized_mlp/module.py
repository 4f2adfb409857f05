"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 2; 732 bytes of tensors in weights.safetensors.
Producer: torch.fx GraphModule; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.ao.nn.intrinsic.quantized as nniq
import torch.ao.nn.quantized as nnq
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 6
TIED_TENSORS = {}
TENSOR_VIEWS = {}
QUANTIZED_TENSORS = {"hidden.weight": 0, "out.weight": 0}
PACKED_WEIGHTS = {
    "hidden": ("set_weight_bias", ("weight", "bias"), False),
    "out": ("set_weight_bias", ("weight", "bias"), False),
}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("cpu"), skip_init():
            self.hidden = nniq.LinearReLU(16, 16)
            self.hidden.scale = 0.003860294120386243
            self.out = nnq.Linear(16, 4)
            self.out.scale = 0.0026252297684550285
            self.out.zero_point = 151
            self.register_buffer("hidden_input_scale_0", torch.empty(()))
            self.register_buffer(
                "hidden_input_zero_point_0", torch.empty((), dtype=torch.int64)
            )
        self.training = False
        if load_weights:
            load_tensors(
                self,
                weights,
                device=device,
                dtype=dtype,
                folder=Path(__file__).resolve().parent,
                weight_files=WEIGHT_FILES,
                tensor_count=TENSOR_COUNT,
                tied_tensors=TIED_TENSORS,
                tensor_views=TENSOR_VIEWS,
                quantized_tensors=QUANTIZED_TENSORS,
                packed_weights=PACKED_WEIGHTS,
            )

    def forward(self, x):
        x = torch.quantize_per_tensor(
            x, self.hidden_input_scale_0, self.hidden_input_zero_point_0, torch.quint8
        )
        # tests/quantized.py:357 in forward: return self.out(self.relu(self.hidden(x)))
        x = self.hidden(x)
        x = self.out(x)
        return x.dequantize()

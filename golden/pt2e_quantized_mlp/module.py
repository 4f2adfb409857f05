"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 340; buffers: 6; 1,920 bytes of tensors in weights.safetensors.
Producer: torch.export; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
import torch.ao.quantization.fx._decomposed  # defines torch.ops.quantized_decomposed
import torch.nn.functional as F
from torch import nn

from .loader import check_input, load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 10
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.hidden = nn.Module()
            self.hidden.weight = nn.Parameter(torch.empty(16, 16))
            self.hidden.bias = nn.Parameter(torch.empty(16))
            self.relu = nn.ReLU()
            self.out = nn.Module()
            self.out.weight = nn.Parameter(torch.empty(4, 16))
            self.out.bias = nn.Parameter(torch.empty(4))
            self.register_buffer("_scale_0", torch.empty(16))
            self.register_buffer("_zero_point_0", torch.empty(16, dtype=torch.int64))
            self.register_buffer("_scale_1", torch.empty(4))
            self.register_buffer("_zero_point_1", torch.empty(4, dtype=torch.int64))
            self.register_buffer(
                "_frozen_param0", torch.empty(16, 16, dtype=torch.int8)
            )
            self.register_buffer("_frozen_param1", torch.empty(4, 16, dtype=torch.int8))
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
            )

    def forward(self, x):
        check_input(x, "x", torch.float32, (4, 16))
        # tests/quantized.py:357 in forward: return self.out(self.relu(self.hidden(x)))
        dequantize_per_channel_default = (
            torch.ops.quantized_decomposed.dequantize_per_channel.default(
                self._frozen_param0,
                self._scale_0,
                self._zero_point_0,
                0,
                -128,
                127,
                torch.int8,
            )
        )
        dequantize_per_channel_default_1 = (
            torch.ops.quantized_decomposed.dequantize_per_channel.default(
                self._frozen_param1,
                self._scale_1,
                self._zero_point_1,
                0,
                -128,
                127,
                torch.int8,
            )
        )
        out = torch.ops.quantized_decomposed.quantize_per_tensor.default(
            x, 0.006862745154649019, 146, 0, 255, torch.uint8
        )
        out = torch.ops.quantized_decomposed.dequantize_per_tensor.default(
            out, 0.006862745154649019, 146, 0, 255, torch.uint8
        )
        out = F.linear(out, dequantize_per_channel_default, self.hidden.bias)
        out = self.relu(out)
        out = torch.ops.quantized_decomposed.quantize_per_tensor.default(
            out, 0.003860294120386243, 0, 0, 255, torch.uint8
        )
        out = torch.ops.quantized_decomposed.dequantize_per_tensor.default(
            out, 0.003860294120386243, 0, 0, 255, torch.uint8
        )
        return F.linear(out, dequantize_per_channel_default_1, self.out.bias)

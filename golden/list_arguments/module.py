"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 700; buffers: 15; 3,120 bytes of tensors in weights.safetensors.
Producer: torch.fx.symbolic_trace; torch 2.13.0.

    model = FxModule()
    output = model(x)

Inputs, outputs and files: see README.md.
"""

from pathlib import Path

import torch
from torch import nn

from .loader import load_tensors, skip_init

WEIGHT_FILES = ("weights.safetensors",)
TENSOR_COUNT = 30
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class DenseLayer(nn.Module):  # tests/models.py:701 DenseLayer
    def __init__(self, num_features) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(num_features)
        self.conv = nn.Conv2d(num_features, 2, 3, padding=1, bias=False)

    def forward(self, features):
        return self.conv(torch.relu(self.norm(torch.cat(features, 1))))


class Joined(nn.Module):  # tests/models.py:726 Joined
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a, b):
        return torch.cat([a, b], 1)


class DenseBlock(nn.ModuleDict):  # tests/models.py:713 DenseBlock
    def forward(self, x):
        features = [x]
        for layer in self.values():
            features.append(layer(features))
        return torch.cat(features, 1)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.block1 = DenseBlock(
                {
                    "layer1": DenseLayer(3),
                    "layer2": DenseLayer(5),
                    "layer3": DenseLayer(7),
                }
            )
            self.block2 = DenseBlock(
                {"layer1": DenseLayer(9), "layer2": DenseLayer(11)}
            )
            self.join = Joined()
        self.eval()
        for module in self.modules():  # as traced: the modules holding children train
            if module is not self and next(module.children(), None) is not None:
                module.training = True
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
        x = self.block1(x)
        x = self.block2(x)
        b = x * 2
        return self.join(x, b)

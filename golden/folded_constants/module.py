"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 684; buffers: 11; 2,912 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 16
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FrozenNorm(nn.Module):  # tests/models.py:4050 FrozenNorm
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x, _tensor_constant0, _tensor_constant1):
        scale = x * _tensor_constant0
        return scale + _tensor_constant1


class FrozenBlock(nn.Module):  # tests/models.py:4071 FrozenBlock
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn1 = FrozenNorm()
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = FrozenNorm()

    def forward(
        self,
        x,
        _tensor_constant2,
        _tensor_constant3,
        _tensor_constant4,
        _tensor_constant5,
    ):
        out = self.bn1(self.conv1(x), _tensor_constant2, _tensor_constant3)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out, _tensor_constant4, _tensor_constant5)
        return self.relu(out + x)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stem = nn.Sequential(
                nn.Conv2d(3, 4, 3, padding=1, bias=False), FrozenNorm(), nn.ReLU()
            )
            self.blocks = nn.Sequential(FrozenBlock(), FrozenBlock())
            self.register_buffer("_tensor_constant0", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant1", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant2", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant3", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant4", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant5", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant6", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant7", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant8", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant9", torch.empty(1, 4, 1, 1))
            self.register_buffer("_tensor_constant10", torch.empty(4))
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
        x = self.stem[0](x)
        x = self.stem[1](x, self._tensor_constant0, self._tensor_constant1)
        x = self.stem[2](x)
        x = self.blocks[0](
            x,
            self._tensor_constant2,
            self._tensor_constant3,
            self._tensor_constant4,
            self._tensor_constant5,
        )
        x = self.blocks[1](
            x,
            self._tensor_constant6,
            self._tensor_constant7,
            self._tensor_constant8,
            self._tensor_constant9,
        )
        x = x.mean((2, 3))
        return x + self._tensor_constant10

"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 83; buffers: 0; 332 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 9
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class NormedConvBlock(nn.Module):  # tests/models.py:6451 NormedConvBlock
    def __init__(self, kernel_size, padding=2, variant=True) -> None:
        super().__init__()
        self.conv = nn.utils.parametrizations.weight_norm(
            nn.Conv1d(4, 4, kernel_size, padding=padding, groups=2), dim=2
        )
        self.act = nn.GELU()
        self.variant = variant

    def forward(self, x):
        x = self.conv(x)
        if self.variant:
            x = x[:, :, :-1]
        return self.act(x)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.blocks = nn.Sequential(
                NormedConvBlock(4), NormedConvBlock(3, padding=1, variant=False)
            )
            self.head = nn.utils.parametrizations.weight_norm(nn.Linear(4, 2))
        self.eval()
        self.blocks.training = True
        self.blocks[0].training = True
        self.blocks[1].training = True
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
        x = self.blocks(x)
        x = x.transpose(1, 2)
        return self.head(x)

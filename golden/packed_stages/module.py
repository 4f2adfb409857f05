"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 231; buffers: 0; 924 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 15
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class TokenPool(nn.Module):  # tests/models.py:2652 TokenPool
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, stride=2, padding=1)
        self.fc = nn.Linear(3, 3)

    def forward(self, x, cls_token):
        return (self.conv(x), self.fc(cls_token))


class TokenStage(nn.Module):  # tests/models.py:2664 TokenStage
    def __init__(self, use_pool=True, use_reshape=True) -> None:
        super().__init__()
        if use_pool:
            self.pool = TokenPool()
        else:
            self.pool = None
        self.mix = nn.Linear(3, 3)
        self.use_reshape = use_reshape

    def forward(self, x):
        x, cls_tokens = x
        if self.pool is not None:
            x, cls_tokens = self.pool(x, cls_tokens)
        if self.use_reshape:
            B, C, H, W = x.shape[:4]
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat((cls_tokens, x), dim=1)
        x = self.mix(x)
        cls_tokens = x[:, :1]
        if self.use_reshape:
            out = x[:, 1:]
            out = out.transpose(1, 2)
            return (cls_tokens, out.reshape(B, C, H, W))
        return cls_tokens


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stages = nn.ModuleList(
                [
                    TokenStage(use_pool=False),
                    TokenStage(),
                    TokenStage(use_reshape=False),
                ]
            )
            self.cls = nn.Parameter(torch.empty(1, 1, 3))
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
        out = self.cls.expand(x.shape[0], -1, -1)
        x, out = self.stages[0]((x, out))
        out, x = self.stages[1]((out, x))
        return self.stages[2]((x, out))

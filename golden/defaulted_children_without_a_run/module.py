"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 880; buffers: 15; 3,720 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 45
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class MobileOneLike(nn.Module):  # tests/models.py:5967 MobileOneLike
    def __init__(
        self,
        use_conv_kxk=True,
        use_identity=True,
        use_conv_scale=True,
        use_act=False,
        se=None,
    ) -> None:
        super().__init__()
        if use_identity:
            self.identity = nn.BatchNorm2d(4)
        else:
            self.identity = None
        if use_conv_scale:
            self.conv_scale = nn.Conv2d(4, 4, 1)
        else:
            self.conv_scale = None
        if use_conv_kxk:
            self.conv_kxk = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1)])
        else:
            self.conv_kxk = None
        self.se = se if se is not None else nn.Identity()
        if use_act:
            self.act = nn.GELU()
        else:
            self.act = nn.Identity()

    def forward(self, x):
        identity_out = 0
        if self.identity is not None:
            identity_out = self.identity(x)
        scale_out = 0
        if self.conv_scale is not None:
            scale_out = self.conv_scale(x)
        out = scale_out + identity_out
        if self.conv_kxk is not None:
            x = self.conv_kxk[0](x)
            out = out + x
        return self.act(self.se(out))


class RepMixer(nn.Module):  # tests/models.py:5997 RepMixer
    def __init__(self) -> None:
        super().__init__()
        self.mixer = MobileOneLike()
        self.norm = MobileOneLike(use_conv_kxk=False, use_conv_scale=False)

    def forward(self, x):
        return x + (self.mixer(x) - self.norm(x))


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.stem = nn.Sequential(
                MobileOneLike(use_identity=False, use_act=True),
                MobileOneLike(use_conv_scale=False, use_act=True),
            )
            self.mixers = nn.Sequential(RepMixer(), RepMixer())
            self.final_conv = MobileOneLike(
                use_identity=False, use_act=True, se=nn.Conv2d(4, 4, 1)
            )
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
        x = self.stem(x)
        x = self.mixers(x)
        return self.final_conv(x)

"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 2,480; buffers: 0; 9,920 bytes of tensors in weights.safetensors.
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
TENSOR_COUNT = 22
TIED_TENSORS = {}
TENSOR_VIEWS = {}


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"), skip_init():
            self.lstm = nn.LSTM(
                5, 7, num_layers=2, batch_first=True, bidirectional=True
            )
            self.gru = nn.GRU(14, 6, bias=False)
            self.rnn = nn.RNN(6, 4, nonlinearity="relu")
        self.eval()
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
        lstm = self.lstm(x)
        out = lstm[0]
        getitem = lstm[1]
        del lstm
        out_1 = getitem[0]
        out_2 = getitem[1]
        del getitem
        out = out.transpose(0, 1)
        gru = self.gru(out)
        del out
        getitem_1 = gru[0]
        out_3 = gru[1]
        del gru
        rnn = self.rnn(getitem_1)
        del getitem_1
        getitem_2 = rnn[0]
        out_1 = out_1.sum()
        out_2 = out_2.sum()
        out_1 = out_1 + out_2
        out_3 = out_3.sum()
        return (getitem_2, out_1 + out_3)

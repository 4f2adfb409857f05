"""FxModule: a torch.fx GraphModule exported by fxexport.

Parameters: 0; buffers: 0; 0 bytes of tensors in no weight file.
Producer: torch.fx GraphModule; torch 2.13.0.

    model = FxModule()
    output = model(L_self_modules_stem_modules_0_parameters_weight_, L_x_, L_self_modules_stem_modules_1_buffers_running_mean_, L_self_modules_stem_modules_1_buffers_running_var_, L_self_modules_stem_modules_1_parameters_weight_, L_self_modules_stem_modules_1_parameters_bias_, L_self_modules_layer1_modules_0_modules_conv1_parameters_weight_, L_self_modules_layer1_modules_0_modules_bn1_buffers_running_mean_, L_self_modules_layer1_modules_0_modules_bn1_buffers_running_var_, L_self_modules_layer1_modules_0_modules_bn1_parameters_weight_, L_self_modules_layer1_modules_0_modules_bn1_parameters_bias_, L_self_modules_layer1_modules_0_modules_conv2_parameters_weight_, L_self_modules_layer1_modules_0_modules_bn2_buffers_running_mean_, L_self_modules_layer1_modules_0_modules_bn2_buffers_running_var_, L_self_modules_layer1_modules_0_modules_bn2_parameters_weight_, L_self_modules_layer1_modules_0_modules_bn2_parameters_bias_, L_self_modules_layer1_modules_1_modules_conv1_parameters_weight_, L_self_modules_layer1_modules_1_modules_bn1_buffers_running_mean_, L_self_modules_layer1_modules_1_modules_bn1_buffers_running_var_, L_self_modules_layer1_modules_1_modules_bn1_parameters_weight_, L_self_modules_layer1_modules_1_modules_bn1_parameters_bias_, L_self_modules_layer1_modules_1_modules_conv2_parameters_weight_, L_self_modules_layer1_modules_1_modules_bn2_buffers_running_mean_, L_self_modules_layer1_modules_1_modules_bn2_buffers_running_var_, L_self_modules_layer1_modules_1_modules_bn2_parameters_weight_, L_self_modules_layer1_modules_1_modules_bn2_parameters_bias_, L_self_modules_layer2_modules_0_modules_conv1_parameters_weight_, L_self_modules_layer2_modules_0_modules_bn1_buffers_running_mean_, L_self_modules_layer2_modules_0_modules_bn1_buffers_running_var_, L_self_modules_layer2_modules_0_modules_bn1_parameters_weight_, L_self_modules_layer2_modules_0_modules_bn1_parameters_bias_, L_self_modules_layer2_modules_0_modules_conv2_parameters_weight_, L_self_modules_layer2_modules_0_modules_bn2_buffers_running_mean_, L_self_modules_layer2_modules_0_modules_bn2_buffers_running_var_, L_self_modules_layer2_modules_0_modules_bn2_parameters_weight_, L_self_modules_layer2_modules_0_modules_bn2_parameters_bias_, L_self_modules_layer2_modules_0_modules_downsample_modules_0_parameters_weight_, L_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_mean_, L_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_var_, L_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_weight_, L_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_bias_, L_self_modules_layer2_modules_1_modules_conv1_parameters_weight_, L_self_modules_layer2_modules_1_modules_bn1_buffers_running_mean_, L_self_modules_layer2_modules_1_modules_bn1_buffers_running_var_, L_self_modules_layer2_modules_1_modules_bn1_parameters_weight_, L_self_modules_layer2_modules_1_modules_bn1_parameters_bias_, L_self_modules_layer2_modules_1_modules_conv2_parameters_weight_, L_self_modules_layer2_modules_1_modules_bn2_buffers_running_mean_, L_self_modules_layer2_modules_1_modules_bn2_buffers_running_var_, L_self_modules_layer2_modules_1_modules_bn2_parameters_weight_, L_self_modules_layer2_modules_1_modules_bn2_parameters_bias_, L_self_modules_head_modules_fc_parameters_weight_, L_self_modules_head_modules_fc_parameters_bias_)

Inputs, outputs and files: see README.md.
"""

import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):  # tests/models.py:448 BasicBlock
    def __init__(self) -> None:
        super().__init__()

    def forward(
        self,
        x,
        conv1_weight,
        bn1_running_mean,
        bn1_running_var,
        bn1_weight,
        bn1_bias,
        conv2_weight,
        bn2_running_mean,
        bn2_running_var,
        bn2_weight,
        bn2_bias,
    ):
        # tests/models.py:464 in forward: out = self.relu(self.bn1(self.conv1(x)))
        out = F.conv2d(x, conv1_weight, None, (1, 1), (1, 1), (1, 1), 1)
        out = F.batch_norm(
            out,
            bn1_running_mean,
            bn1_running_var,
            bn1_weight,
            bn1_bias,
            False,
            0.1,
            1e-05,
        )
        out = F.relu(out, inplace=True)
        # tests/models.py:465 in forward: out = self.bn2(self.conv2(out))
        out = F.conv2d(out, conv2_weight, None, (1, 1), (1, 1), (1, 1), 1)
        out = F.batch_norm(
            out,
            bn2_running_mean,
            bn2_running_var,
            bn2_weight,
            bn2_bias,
            False,
            0.1,
            1e-05,
        )
        return F.relu(out + x, inplace=True)


class BasicBlock_1(nn.Module):  # tests/models.py:448 BasicBlock
    def __init__(self) -> None:
        super().__init__()

    def forward(
        self,
        x,
        conv1_weight,
        bn1_running_mean,
        bn1_running_var,
        bn1_weight,
        bn1_bias,
        conv2_weight,
        bn2_running_mean,
        bn2_running_var,
        bn2_weight,
        bn2_bias,
        downsample_0_weight,
        downsample_1_running_mean,
        downsample_1_running_var,
        downsample_1_weight,
        downsample_1_bias,
    ):
        # tests/models.py:464 in forward: out = self.relu(self.bn1(self.conv1(x)))
        out = F.conv2d(x, conv1_weight, None, (2, 2), (1, 1), (1, 1), 1)
        out = F.batch_norm(
            out,
            bn1_running_mean,
            bn1_running_var,
            bn1_weight,
            bn1_bias,
            False,
            0.1,
            1e-05,
        )
        out = F.relu(out, inplace=True)
        # tests/models.py:465 in forward: out = self.bn2(self.conv2(out))
        out = F.conv2d(out, conv2_weight, None, (1, 1), (1, 1), (1, 1), 1)
        out = F.batch_norm(
            out,
            bn2_running_mean,
            bn2_running_var,
            bn2_weight,
            bn2_bias,
            False,
            0.1,
            1e-05,
        )
        # tests/models.py:467 in forward: identity = self.downsample(x)
        identity = F.conv2d(x, downsample_0_weight, None, (2, 2), (0, 0), (1, 1), 1)
        identity = F.batch_norm(
            identity,
            downsample_1_running_mean,
            downsample_1_running_var,
            downsample_1_weight,
            downsample_1_bias,
            False,
            0.1,
            1e-05,
        )
        return F.relu(out + identity, inplace=True)


class FxModule(nn.Module):
    def __init__(
        self, *, load_weights: bool = True, weights=None, device=None, dtype=None
    ) -> None:
        super().__init__()
        with torch.device("meta"):
            self.layer1 = nn.Sequential(BasicBlock(), BasicBlock())
            self.layer2 = nn.Sequential(BasicBlock_1(), BasicBlock())

    def forward(
        self,
        L_self_modules_stem_modules_0_parameters_weight_,
        L_x_,
        L_self_modules_stem_modules_1_buffers_running_mean_,
        L_self_modules_stem_modules_1_buffers_running_var_,
        L_self_modules_stem_modules_1_parameters_weight_,
        L_self_modules_stem_modules_1_parameters_bias_,
        L_self_modules_layer1_modules_0_modules_conv1_parameters_weight_,
        L_self_modules_layer1_modules_0_modules_bn1_buffers_running_mean_,
        L_self_modules_layer1_modules_0_modules_bn1_buffers_running_var_,
        L_self_modules_layer1_modules_0_modules_bn1_parameters_weight_,
        L_self_modules_layer1_modules_0_modules_bn1_parameters_bias_,
        L_self_modules_layer1_modules_0_modules_conv2_parameters_weight_,
        L_self_modules_layer1_modules_0_modules_bn2_buffers_running_mean_,
        L_self_modules_layer1_modules_0_modules_bn2_buffers_running_var_,
        L_self_modules_layer1_modules_0_modules_bn2_parameters_weight_,
        L_self_modules_layer1_modules_0_modules_bn2_parameters_bias_,
        L_self_modules_layer1_modules_1_modules_conv1_parameters_weight_,
        L_self_modules_layer1_modules_1_modules_bn1_buffers_running_mean_,
        L_self_modules_layer1_modules_1_modules_bn1_buffers_running_var_,
        L_self_modules_layer1_modules_1_modules_bn1_parameters_weight_,
        L_self_modules_layer1_modules_1_modules_bn1_parameters_bias_,
        L_self_modules_layer1_modules_1_modules_conv2_parameters_weight_,
        L_self_modules_layer1_modules_1_modules_bn2_buffers_running_mean_,
        L_self_modules_layer1_modules_1_modules_bn2_buffers_running_var_,
        L_self_modules_layer1_modules_1_modules_bn2_parameters_weight_,
        L_self_modules_layer1_modules_1_modules_bn2_parameters_bias_,
        L_self_modules_layer2_modules_0_modules_conv1_parameters_weight_,
        L_self_modules_layer2_modules_0_modules_bn1_buffers_running_mean_,
        L_self_modules_layer2_modules_0_modules_bn1_buffers_running_var_,
        L_self_modules_layer2_modules_0_modules_bn1_parameters_weight_,
        L_self_modules_layer2_modules_0_modules_bn1_parameters_bias_,
        L_self_modules_layer2_modules_0_modules_conv2_parameters_weight_,
        L_self_modules_layer2_modules_0_modules_bn2_buffers_running_mean_,
        L_self_modules_layer2_modules_0_modules_bn2_buffers_running_var_,
        L_self_modules_layer2_modules_0_modules_bn2_parameters_weight_,
        L_self_modules_layer2_modules_0_modules_bn2_parameters_bias_,
        L_self_modules_layer2_modules_0_modules_downsample_modules_0_parameters_weight_,
        L_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_mean_,
        L_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_var_,
        L_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_weight_,
        L_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_bias_,
        L_self_modules_layer2_modules_1_modules_conv1_parameters_weight_,
        L_self_modules_layer2_modules_1_modules_bn1_buffers_running_mean_,
        L_self_modules_layer2_modules_1_modules_bn1_buffers_running_var_,
        L_self_modules_layer2_modules_1_modules_bn1_parameters_weight_,
        L_self_modules_layer2_modules_1_modules_bn1_parameters_bias_,
        L_self_modules_layer2_modules_1_modules_conv2_parameters_weight_,
        L_self_modules_layer2_modules_1_modules_bn2_buffers_running_mean_,
        L_self_modules_layer2_modules_1_modules_bn2_buffers_running_var_,
        L_self_modules_layer2_modules_1_modules_bn2_parameters_weight_,
        L_self_modules_layer2_modules_1_modules_bn2_parameters_bias_,
        L_self_modules_head_modules_fc_parameters_weight_,
        L_self_modules_head_modules_fc_parameters_bias_,
    ):
        # tests/models.py:487 in forward: x = self.layer2(self.layer1(self.stem(x)))
        out = F.conv2d(
            L_x_,
            L_self_modules_stem_modules_0_parameters_weight_,
            None,
            (1, 1),
            (1, 1),
            (1, 1),
            1,
        )
        out = F.batch_norm(
            out,
            L_self_modules_stem_modules_1_buffers_running_mean_,
            L_self_modules_stem_modules_1_buffers_running_var_,
            L_self_modules_stem_modules_1_parameters_weight_,
            L_self_modules_stem_modules_1_parameters_bias_,
            False,
            0.1,
            1e-05,
        )
        out = F.relu(out, inplace=True)
        out = self.layer1[0](
            out,
            L_self_modules_layer1_modules_0_modules_conv1_parameters_weight_,
            L_self_modules_layer1_modules_0_modules_bn1_buffers_running_mean_,
            L_self_modules_layer1_modules_0_modules_bn1_buffers_running_var_,
            L_self_modules_layer1_modules_0_modules_bn1_parameters_weight_,
            L_self_modules_layer1_modules_0_modules_bn1_parameters_bias_,
            L_self_modules_layer1_modules_0_modules_conv2_parameters_weight_,
            L_self_modules_layer1_modules_0_modules_bn2_buffers_running_mean_,
            L_self_modules_layer1_modules_0_modules_bn2_buffers_running_var_,
            L_self_modules_layer1_modules_0_modules_bn2_parameters_weight_,
            L_self_modules_layer1_modules_0_modules_bn2_parameters_bias_,
        )
        out = self.layer1[1](
            out,
            L_self_modules_layer1_modules_1_modules_conv1_parameters_weight_,
            L_self_modules_layer1_modules_1_modules_bn1_buffers_running_mean_,
            L_self_modules_layer1_modules_1_modules_bn1_buffers_running_var_,
            L_self_modules_layer1_modules_1_modules_bn1_parameters_weight_,
            L_self_modules_layer1_modules_1_modules_bn1_parameters_bias_,
            L_self_modules_layer1_modules_1_modules_conv2_parameters_weight_,
            L_self_modules_layer1_modules_1_modules_bn2_buffers_running_mean_,
            L_self_modules_layer1_modules_1_modules_bn2_buffers_running_var_,
            L_self_modules_layer1_modules_1_modules_bn2_parameters_weight_,
            L_self_modules_layer1_modules_1_modules_bn2_parameters_bias_,
        )
        out = self.layer2[0](
            out,
            L_self_modules_layer2_modules_0_modules_conv1_parameters_weight_,
            L_self_modules_layer2_modules_0_modules_bn1_buffers_running_mean_,
            L_self_modules_layer2_modules_0_modules_bn1_buffers_running_var_,
            L_self_modules_layer2_modules_0_modules_bn1_parameters_weight_,
            L_self_modules_layer2_modules_0_modules_bn1_parameters_bias_,
            L_self_modules_layer2_modules_0_modules_conv2_parameters_weight_,
            L_self_modules_layer2_modules_0_modules_bn2_buffers_running_mean_,
            L_self_modules_layer2_modules_0_modules_bn2_buffers_running_var_,
            L_self_modules_layer2_modules_0_modules_bn2_parameters_weight_,
            L_self_modules_layer2_modules_0_modules_bn2_parameters_bias_,
            L_self_modules_layer2_modules_0_modules_downsample_modules_0_parameters_weight_,
            L_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_mean_,
            L_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_var_,
            L_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_weight_,
            L_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_bias_,
        )
        out = self.layer2[1](
            out,
            L_self_modules_layer2_modules_1_modules_conv1_parameters_weight_,
            L_self_modules_layer2_modules_1_modules_bn1_buffers_running_mean_,
            L_self_modules_layer2_modules_1_modules_bn1_buffers_running_var_,
            L_self_modules_layer2_modules_1_modules_bn1_parameters_weight_,
            L_self_modules_layer2_modules_1_modules_bn1_parameters_bias_,
            L_self_modules_layer2_modules_1_modules_conv2_parameters_weight_,
            L_self_modules_layer2_modules_1_modules_bn2_buffers_running_mean_,
            L_self_modules_layer2_modules_1_modules_bn2_buffers_running_var_,
            L_self_modules_layer2_modules_1_modules_bn2_parameters_weight_,
            L_self_modules_layer2_modules_1_modules_bn2_parameters_bias_,
        )
        # tests/models.py:488 in forward: return self.head["fc"](torch.flatten(self.head["pool"](x), 1))
        out = F.adaptive_avg_pool2d(out, 1)
        out = torch.flatten(out, 1)
        out = F.linear(
            out,
            L_self_modules_head_modules_fc_parameters_weight_,
            L_self_modules_head_modules_fc_parameters_bias_,
        )
        return (out,)

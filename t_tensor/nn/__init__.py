"""Neural networks, as ``torch.nn``: :class:`Module` (the base of every layer and model, with
parameter registration, ``state_dict``, train/eval), :class:`Parameter`, the layers (``Linear``,
``Embedding``, ``LayerNorm``, ``Dropout``, activations, containers, losses), :mod:`.init`
(weight initialization) and :mod:`.functional` (the stateless functions: convolution, pooling,
``linear``, ``dropout``, ``cross_entropy`` ...).

>>> import t_tensor as tt
>>> tt.nn.functional.conv2d(tt.ones(1, 1, 3, 3), tt.ones(1, 1, 2, 2)).tolist()
[[[[4.0, 4.0], [4.0, 4.0]]]]
>>> net = tt.nn.Sequential(tt.nn.Linear(3, 2), tt.nn.Tanh())
>>> net(tt.ones(4, 3)).shape
(4, 2)
"""

from t_tensor.nn import functional, init
from t_tensor.nn.module import Module
from t_tensor.nn.modules import (
    GELU,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    BCELoss,
    BCEWithLogitsLoss,
    Conv1d,
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    GroupNorm,
    Identity,
    L1Loss,
    LayerNorm,
    Linear,
    LogSoftmax,
    MaxPool1d,
    MaxPool2d,
    ModuleDict,
    ModuleList,
    MSELoss,
    MultiheadAttention,
    NLLLoss,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    SmoothL1Loss,
    Softmax,
    Tanh,
)
from t_tensor.nn.parameter import Parameter

__all__ = [
    "functional", "init", "Module", "Parameter",
    "GELU", "LogSoftmax", "ReLU", "Sigmoid", "SiLU", "Softmax", "Tanh",
    "ModuleDict", "ModuleList", "Sequential",
    "Dropout", "Embedding", "Flatten", "Identity", "LayerNorm", "Linear",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss",
    "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "MultiheadAttention",
]  # fmt: skip

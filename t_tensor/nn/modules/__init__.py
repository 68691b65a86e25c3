"""The layers of :mod:`t_tensor.nn`, one module per kind (re-exported from ``t_tensor.nn``)."""

from t_tensor.nn.modules.activation import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from t_tensor.nn.modules.attention import MultiheadAttention
from t_tensor.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, GroupNorm
from t_tensor.nn.modules.container import ModuleDict, ModuleList, Sequential
from t_tensor.nn.modules.conv import Conv1d, Conv2d
from t_tensor.nn.modules.dropout import Dropout
from t_tensor.nn.modules.linear import Flatten, Identity, Linear
from t_tensor.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from t_tensor.nn.modules.normalization import LayerNorm
from t_tensor.nn.modules.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from t_tensor.nn.modules.sparse import Embedding

__all__ = [
    "GELU", "LogSoftmax", "ReLU", "Sigmoid", "SiLU", "Softmax", "Tanh",
    "ModuleDict", "ModuleList", "Sequential",
    "Dropout", "Embedding", "Flatten", "Identity", "LayerNorm", "Linear",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss",
    "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "MultiheadAttention",
]  # fmt: skip

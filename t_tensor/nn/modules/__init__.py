"""The layers of :mod:`t_tensor.nn`, one module per kind (re-exported from ``t_tensor.nn``)."""

from t_tensor.nn.modules.activation import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from t_tensor.nn.modules.container import ModuleDict, ModuleList, Sequential
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
from t_tensor.nn.modules.sparse import Embedding

__all__ = [
    "GELU", "LogSoftmax", "ReLU", "Sigmoid", "SiLU", "Softmax", "Tanh",
    "ModuleDict", "ModuleList", "Sequential",
    "Dropout", "Embedding", "Flatten", "Identity", "LayerNorm", "Linear",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss",
]  # fmt: skip

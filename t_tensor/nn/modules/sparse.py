"""``Embedding``: a lookup table of ``num_embeddings`` vectors of size ``embedding_dim``.

>>> import t_tensor as tt
>>> emb = tt.nn.Embedding(10, 3, padding_idx=0)
>>> emb
Embedding(10, 3, padding_idx=0)
>>> emb(tt.tensor([[1, 2], [0, 9]])).shape
(2, 2, 3)
>>> emb.weight[0].tolist()
[0.0, 0.0, 0.0]
"""

from __future__ import annotations

from typing import Any

from t_tensor.autograd.grad_mode import no_grad
from t_tensor.creation import empty
from t_tensor.nn import functional_core as F
from t_tensor.nn import init
from t_tensor.nn.module import Module
from t_tensor.nn.modules.linear import factory_dtype
from t_tensor.nn.parameter import Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """Maps integer indices (any shape) to rows of ``weight`` ``(num_embeddings, embedding_dim)``,
    initialized N(0, 1). The row ``padding_idx`` starts at zero and gets no gradient.
    ``_weight`` gives the initial table instead."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: Any = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Any = None, _freeze: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: max_norm, scale_grad_by_freq and sparse are not supported")
        dtype = factory_dtype(dtype, device, "Embedding")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = F._padding_index(padding_idx, num_embeddings, "Embedding")
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Embedding: shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, padding_idx: int | None = None) -> Embedding:
        """An Embedding over the given 2-D table (frozen unless ``freeze=False``)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, _weight=embeddings, _freeze=freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    def forward(self, input: Any) -> Any:
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text

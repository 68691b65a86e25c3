"""``MultiheadAttention``, as ``torch.nn.MultiheadAttention`` (same parameters and state_dict keys).

>>> import t_tensor as tt
>>> mha = tt.nn.MultiheadAttention(8, 2, batch_first=True)
>>> x = tt.randn(3, 5, 8)
>>> out, weights = mha(x, x, x)
>>> out.shape, weights.shape
((3, 5, 8), (3, 5, 5))
"""

from __future__ import annotations

from typing import Any

from t_tensor.creation import empty
from t_tensor.nn import init
from t_tensor.nn.functional_attention import multi_head_attention
from t_tensor.nn.module import Module
from t_tensor.nn.modules.linear import Linear, factory_dtype
from t_tensor.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads: queries, keys and values are projected by the packed
    ``in_proj_weight`` (3E, E) and ``in_proj_bias``, attended per head, and projected by
    ``out_proj``. Inputs are (L, N, E) or, with ``batch_first``, (N, L, E); unbatched (L, E) works
    too. ``forward`` returns (output, attention weights averaged over heads or None)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        dtype = factory_dtype(dtype, device, "MultiheadAttention")
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
            )
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported")
        if (kdim is not None and kdim != embed_dim) or (vdim is not None and vdim != embed_dim):
            raise NotImplementedError("MultiheadAttention: keys and values must have embed_dim features")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dtype))
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None, need_weights: bool = True,
                attn_mask: Any = None, average_attn_weights: bool = True, is_causal: bool = False) -> tuple:
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        out, weights = multi_head_attention(
            query, key, value, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
            self.out_proj.bias, dropout_p=self.dropout, training=self.training, key_padding_mask=key_padding_mask,
            need_weights=need_weights, attn_mask=attn_mask, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if unbatched:
            out = out.squeeze(0)
            weights = weights.squeeze(0) if weights is not None else None
        elif not self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

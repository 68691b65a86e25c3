"""Attention, built from differentiable primitives (matmul, softmax, where), so it needs no
backward of its own: ``scaled_dot_product_attention`` and the multi-head attention that
:class:`~t_tensor.nn.MultiheadAttention` runs.

>>> import t_tensor as tt
>>> import t_tensor.nn.functional as F
>>> q = k = v = tt.ones(2, 3, 4)
>>> F.scaled_dot_product_attention(q, k, v).shape
(2, 3, 4)
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor import dtypes
from t_tensor import reductions as R
from t_tensor.creation import ones
from t_tensor.elementwise import where
from t_tensor.nn import functional_core as F
from t_tensor.tensor_impl import TensorImpl

__all__ = ["multi_head_attention", "scaled_dot_product_attention"]


def _mask_bias(mask: Any, like: Any, fn: str) -> Any:
    """A boolean mask (True = may attend) as 0 / -inf to add to the scores; a float mask as is."""
    if not isinstance(mask, TensorImpl):
        raise TypeError(f"{fn}: attn_mask must be a Tensor, got {type(mask).__name__}")
    if mask.dtype is dtypes.bool:
        return where(mask, 0.0, float("-inf")).to(like.dtype)
    if not mask.dtype.is_floating_point:
        raise TypeError(f"{fn}: attn_mask must be bool or floating point, got {mask.dtype.name}")
    return mask


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None) -> Any:
    """``softmax(query @ key^T * scale + mask) @ value`` over (..., L, E) queries, (..., S, E) keys
    and (..., S, Ev) values. ``attn_mask``: bool (True = may attend, as PyTorch) or float (added);
    ``is_causal``: each query attends to keys at or before its position; ``scale`` defaults to
    ``1 / sqrt(E)``; ``dropout_p`` drops attention weights (always, as PyTorch's function does).

    >>> import t_tensor as tt
    >>> q = tt.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    >>> out = tt.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    >>> [[round(v, 4) for v in row] for row in out[0].tolist()]
    [[1.0, 0.0], [0.3302, 0.6698]]
    """
    fn = "scaled_dot_product_attention"
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, TensorImpl):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"{fn}: query and key must have the same last dimension, got {query.shape} and {key.shape}")
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"{fn}: give either attn_mask or is_causal, not both")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.mT) * scale
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        attn_mask = ones(length, source, dtype=dtypes.bool).tril()
    if attn_mask is not None:
        scores = scores + _mask_bias(attn_mask, scores, fn)
    weights = R.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, training=True)
    return weights @ value


def multi_head_attention(query: Any, key: Any, value: Any, num_heads: int, in_proj_weight: Any,
                         in_proj_bias: Any, out_proj_weight: Any, out_proj_bias: Any, *, dropout_p: float = 0.0,
                         training: bool = True, key_padding_mask: Any = None, need_weights: bool = True,
                         attn_mask: Any = None, average_attn_weights: bool = True,
                         is_causal: bool = False) -> tuple[Any, Any]:
    """Multi-head attention on batch-first (N, L, E) query and (N, S, E) key/value, with PyTorch's
    packed input projection ``in_proj_weight`` (3E, E). Returns (output (N, L, E), attention
    weights (N, L, S) averaged over heads, or (N, heads, L, S), or None without need_weights)."""
    fn = "multi_head_attention"
    batch, length, embed = query.shape
    source = key.shape[1]
    if embed % num_heads:
        raise ValueError(f"{fn}: embed_dim ({embed}) must be divisible by num_heads ({num_heads})")
    head = embed // num_heads
    w_q, w_k, w_v = in_proj_weight.chunk(3, 0)
    b_q, b_k, b_v = in_proj_bias.chunk(3, 0) if in_proj_bias is not None else (None, None, None)

    def heads(x: Any, w: Any, b: Any, n: int) -> Any:  # (N, n, E) -> (N, heads, n, head)
        return F.linear(x, w, b).reshape(batch, n, num_heads, head).transpose(1, 2)

    q, k, v = heads(query, w_q, b_q, length), heads(key, w_k, b_k, source), heads(value, w_v, b_v, source)
    scores = (q @ k.mT) * (1.0 / math.sqrt(head))
    if is_causal and attn_mask is None:
        attn_mask = ones(length, source, dtype=dtypes.bool).tril().logical_not()
    if attn_mask is not None:  # PyTorch's module convention: True = may NOT attend
        if attn_mask.dtype is dtypes.bool:
            attn_mask = where(attn_mask, float("-inf"), 0.0).to(scores.dtype)
        if attn_mask.ndim == 3:  # (N * heads, L, S)
            attn_mask = attn_mask.reshape(batch, num_heads, length, source)
        scores = scores + attn_mask
    if key_padding_mask is not None:  # (N, S), True = padding
        if key_padding_mask.dtype is dtypes.bool:
            key_padding_mask = where(key_padding_mask, float("-inf"), 0.0).to(scores.dtype)
        scores = scores + key_padding_mask.reshape(batch, 1, 1, source)
    weights = R.softmax(scores, -1)
    dropped = F.dropout(weights, dropout_p, training=training) if dropout_p > 0.0 else weights
    out = (dropped @ v).transpose(1, 2).reshape(batch, length, embed)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    return out, (weights.mean(1) if average_attn_weights else weights)

"""``repr`` of tensors in PyTorch's style.

>>> import t_tensor as tt
>>> tt.tensor([[1.0, 2.5], [3.0, 4.0]])
tensor([[1.0000, 2.5000],
        [3.0000, 4.0000]])
>>> tt.tensor([1, 2, 3], dtype=tt.int32)
tensor([1, 2, 3], dtype=t_tensor.int32)

The rules, as in PyTorch: floats that are all whole numbers print as ``1.``; otherwise four
decimals, or scientific notation when the magnitudes span more than 1000x, exceed 1e8 or fall
below 1e-4. Every element gets the same width so columns line up. Tensors with more than 1000
elements show the first and last three entries of each dimension around ``...``. The dtype is
shown unless it is the default float dtype, int64 or bool (the ones a literal would produce).
"""

from __future__ import annotations

import math

import numpy as np

from t_tensor import dtypes

__all__ = ["tensor_repr"]

_THRESHOLD = 1000   # more elements than this are summarized
_EDGE_ITEMS = 3     # entries shown at each end of a summarized dimension
_LINE_WIDTH = 80
_PRECISION = 4


def _float_formatter(values: np.ndarray):
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    if finite.size and np.all(finite == np.round(finite)) and (nonzero.size == 0 or nonzero.max() < 1e8):
        return lambda v: _special(v) or f"{v:.0f}."
    if nonzero.size:
        big, small = float(nonzero.max()), float(nonzero.min())
        if big / small > 1000.0 or big > 1e8 or small < 1e-4:
            return lambda v: _special(v) or f"{v:.{_PRECISION}e}"
    return lambda v: _special(v) or f"{v:.{_PRECISION}f}"


def _special(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def _summarized(values: np.ndarray) -> np.ndarray:
    """Only the edge entries along every dimension (what a summarized print shows)."""
    for axis, size in enumerate(values.shape):
        if size > 2 * _EDGE_ITEMS:
            keep = list(range(_EDGE_ITEMS)) + list(range(size - _EDGE_ITEMS, size))
            values = np.take(values, keep, axis=axis)
    return values


def _format_block(values: np.ndarray, fmt, width: int, indent: int, summarize: bool) -> str:
    if values.ndim == 0:
        return fmt(values.item()).rjust(width)
    size = values.shape[0]
    skip = summarize and size > 2 * _EDGE_ITEMS
    indices = list(range(_EDGE_ITEMS)) + [None] + list(range(size - _EDGE_ITEMS, size)) if skip else range(size)
    if values.ndim == 1:
        # PyTorch marks the gap in a row with " ..." whatever the column width
        items = [" ..." if i is None else fmt(values[i].item()).rjust(width) for i in indices]
        per_line = max(1, (_LINE_WIDTH - indent) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    parts = ["..." if i is None else _format_block(values[i], fmt, width, indent + 1, summarize) for i in indices]
    return "[" + separator.join(parts) + "]"


def tensor_repr(tensor) -> str:
    """The string ``repr(tensor)`` returns."""
    values = np.asarray(tensor)
    if values.dtype == np.float16:
        values = values.astype(np.float32)
    summarize = values.size > _THRESHOLD
    shown = _summarized(values) if summarize else values
    if values.dtype.kind == "f":
        fmt = _float_formatter(shown.reshape(-1).astype(np.float64))
    elif values.dtype.kind == "b":
        fmt = lambda v: "True" if v else "False"  # noqa: E731
    else:
        fmt = lambda v: str(v)  # noqa: E731
    flat = shown.reshape(-1)
    width = max((len(fmt(v.item())) for v in flat), default=0)
    prefix = "tensor("
    suffixes = []
    if values.size == 0:
        body = "[]"
        if values.shape != (0,):
            suffixes.append(f"size={tuple(values.shape)}")
    else:
        body = _format_block(shown if not summarize else values, fmt, width, len(prefix), summarize)
    if tensor.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool):
        suffixes.append(f"dtype={tensor.dtype!r}")
    meta = tensor._ag
    if meta is not None and meta.requires_grad:  # as PyTorch: the history, or that a leaf requires grad
        suffixes.append(f"grad_fn=<{meta.grad_fn.name()}>" if meta.grad_fn is not None else "requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"

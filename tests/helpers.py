"""The two helpers every op test uses: run the same function through t_tensor and a reference.

``helper_test_op`` builds t_tensor inputs and reference inputs (NumPy arrays or torch tensors)
from the same NumPy data, applies one function to each, and compares shape, dtype and values.
``helper_test_exception`` checks that both libraries reject the same bad input, and that
t_tensor raises the expected exception type with a message naming the function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import torch

import t_tensor as tt

TORCH_DTYPES = {
    tt.bool: torch.bool,
    tt.int8: torch.int8,
    tt.int16: torch.int16,
    tt.int32: torch.int32,
    tt.int64: torch.int64,
    tt.uint8: torch.uint8,
    tt.float16: torch.float16,
    tt.float32: torch.float32,
    tt.float64: torch.float64,
}


def _to_ref(array: np.ndarray, ref: str) -> Any:
    return torch.from_numpy(array.copy()) if ref == "torch" else array.copy()


def _ref_values(result: Any) -> np.ndarray:
    return result.numpy() if isinstance(result, torch.Tensor) else np.asarray(result)


def _compare(got: Any, expected: Any, atol: float, rtol: float, ref: str) -> None:
    if isinstance(expected, (tuple, list)) and not isinstance(got, tt.Tensor):
        assert isinstance(got, (tuple, list)), f"expected a sequence, got {type(got).__name__}"
        assert len(got) == len(expected), f"{len(got)} results, reference gives {len(expected)}"
        for g, e in zip(got, expected, strict=True):
            _compare(g, e, atol, rtol, ref)
        return
    assert isinstance(got, tt.Tensor), f"expected a Tensor, got {type(got).__name__}"
    want = _ref_values(expected)
    assert got.shape == want.shape, f"shape {got.shape}, reference {want.shape}"
    if ref == "torch":
        assert TORCH_DTYPES[got.dtype] == expected.dtype, f"dtype {got.dtype}, reference {expected.dtype}"
    else:
        assert got.dtype.numpy == want.dtype, f"dtype {got.dtype}, reference {want.dtype}"
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64), atol=atol, rtol=rtol)


def helper_test_op(
    inputs: Sequence[np.ndarray],
    tt_fn: Callable[..., Any],
    ref_fn: Callable[..., Any] | None = None,
    *,
    ref: str = "numpy",
    atol: float = 0.0,
    rtol: float = 0.0,
    make: Callable[[np.ndarray], tt.Tensor] = tt.tensor,
) -> Any:
    """Apply ``tt_fn`` to t_tensor inputs and ``ref_fn`` (default: the same function) to reference
    inputs made from the same arrays, and compare results. Returns the t_tensor result."""
    tt_inputs = [make(a.copy()) for a in inputs]
    ref_inputs = [_to_ref(a, ref) for a in inputs]
    got = tt_fn(*tt_inputs)
    expected = (ref_fn or tt_fn)(*ref_inputs)
    _compare(got, expected, atol, rtol, ref)
    return got


def helper_test_exception(
    inputs: Sequence[np.ndarray],
    tt_fn: Callable[..., Any],
    ref_fn: Callable[..., Any] | None = None,
    *,
    exception: type[BaseException],
    match: str,
    ref: str = "torch",
) -> None:
    """Both libraries must reject the input; t_tensor with ``exception`` and a message matching ``match``."""
    with pytest.raises(Exception):  # noqa: B017 - the reference's exception types differ by library
        (ref_fn or tt_fn)(*[_to_ref(a, ref) for a in inputs])
    with pytest.raises(exception, match=match):
        tt_fn(*[tt.tensor(a.copy()) for a in inputs])

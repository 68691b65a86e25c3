"""The two helpers every op test uses: run the same function through t_tensor and a reference.

``helper_test_op`` builds t_tensor inputs and reference inputs (NumPy arrays or torch tensors)
from the same NumPy data, applies one function to each, and compares shape, dtype and values.
``helper_test_exception`` checks that both libraries reject the same bad input, and that
t_tensor raises the expected exception type with a message naming the function.

The memory layouts (``LAYOUTS``, ``base_shape``, ``apply_layout``), the broadcastable-shapes
strategy and the per-dtype tolerances are shared by every op family's tests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

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


# ---------------------------------------------------------------------- layouts


LAYOUTS = ("contiguous", "transposed", "sliced", "expanded")


def base_shape(shape: tuple[int, ...], layout: str) -> tuple[int, ...]:
    """The shape of the contiguous array that ``apply_layout`` turns into ``shape``."""
    if layout == "transposed":
        return shape[::-1] if len(shape) >= 2 else shape
    if layout == "sliced":
        return tuple(2 * n + 1 for n in shape)
    if layout == "expanded":
        return tuple(1 if i % 2 == 0 else n for i, n in enumerate(shape))[1:]
    return shape


def apply_layout(x, layout: str, shape: tuple[int, ...]):
    """A view of ``x`` (t_tensor or torch) with ``shape`` and the layout's strides."""
    if layout == "transposed":
        return x.permute(*reversed(range(x.ndim))) if x.ndim >= 2 else x
    if layout == "sliced":
        return x[(slice(1, None, 2),) * x.ndim]  # odd elements: strides 2, offset > 0
    if layout == "expanded":
        return x.expand(tuple(shape))
    return x


@st.composite
def broadcast_shapes(draw, n: int = 2) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """A result shape and ``n`` operand shapes broadcasting to it (fewer dims, some sizes 1)."""
    result = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    operands = []
    for _ in range(n):
        ndim = draw(st.integers(0, len(result)))
        ones = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
        operands.append(tuple(1 if one else size for one, size in zip(ones, result[len(result) - ndim :], strict=True)))
    if operands and all(len(s) < len(result) for s in operands):
        operands[0] = (1,) * (len(result) - len(operands[0])) + operands[0]  # someone must have all dims
    return result, operands


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(atol, rtol) for results of a torch dtype."""
    return {
        torch.float16: (1e-3, 1e-3),
        torch.float32: (1e-6, 1e-5),
        torch.float64: (1e-12, 1e-12),
    }.get(dtype, (0.0, 0.0))


# ---------------------------------------------------------------------- gradients


def helper_test_grad(
    inputs: Sequence[np.ndarray],
    tt_fn: Callable[..., Any],
    torch_fn: Callable[..., Any] | None = None,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    grad_inputs: Sequence[bool] | None = None,
    seed: int = 0,
    create_graph: bool = False,
) -> None:
    """Run ``tt_fn`` and ``torch_fn`` (default: the same function) on the same values, with
    requires_grad on the float inputs (or those ``grad_inputs`` selects), backpropagate the same
    random output gradient through every float output, and compare values and input gradients.
    With ``create_graph``, the gradients are differentiated again (their sum, weighted by a second
    random tensor) and the second-order gradients compared too."""
    rng = np.random.default_rng(seed)
    grad_inputs = grad_inputs or [a.dtype.kind == "f" for a in inputs]
    tt_in = [tt.tensor(a.copy(), requires_grad=bool(g)) for a, g in zip(inputs, grad_inputs, strict=False)]
    th_in = [torch.tensor(a.copy(), requires_grad=bool(g)) for a, g in zip(inputs, grad_inputs, strict=False)]
    tt_out = tt_fn(*tt_in)
    th_out = (torch_fn or tt_fn)(*th_in)
    tt_outs = list(tt_out) if isinstance(tt_out, (tuple, list)) else [tt_out]
    th_outs = list(th_out) if isinstance(th_out, (tuple, list)) else [th_out]
    assert len(tt_outs) == len(th_outs)
    pairs = []
    for got, expected in zip(tt_outs, th_outs, strict=False):
        _compare(got, expected.detach(), atol, rtol, "torch")
        if expected.requires_grad:
            assert got.requires_grad, "the t_tensor output does not require grad, the torch one does"
            seed_grad = rng.standard_normal(expected.shape).astype(expected.detach().numpy().dtype)
            pairs.append((got, expected, seed_grad))
    if not pairs:
        return
    chosen = [i for i, g in enumerate(grad_inputs) if g]
    tt_grads = tt.autograd.grad([p[0] for p in pairs], [tt_in[i] for i in chosen],
                                [tt.tensor(p[2]) for p in pairs], allow_unused=True, create_graph=create_graph)
    th_grads = torch.autograd.grad([p[1] for p in pairs], [th_in[i] for i in chosen],
                                   [torch.tensor(p[2]) for p in pairs], allow_unused=True, create_graph=create_graph)
    for i, got, expected in zip(chosen, tt_grads, th_grads, strict=False):
        if expected is None:
            assert got is None or not np.any(np.asarray(got)), f"input {i}: torch gives no gradient"
            continue
        assert got is not None, f"input {i}: t_tensor gives no gradient, torch does"
        assert got.shape == tuple(expected.shape), f"input {i}: gradient shape {got.shape} vs {tuple(expected.shape)}"
        _compare(got, _materialized(expected), atol, rtol, "torch")
    if not create_graph:
        return
    second = [(g, e) for g, e in zip(tt_grads, th_grads, strict=False) if e is not None and e.requires_grad]
    if not second:
        return
    weights = [rng.standard_normal(e.shape).astype(e.detach().numpy().dtype) for _, e in second]
    th_second = torch.autograd.grad([e for _, e in second], [th_in[i] for i in chosen],
                                    [torch.tensor(w) for w in weights], allow_unused=True)
    # A first-order gradient that does not depend on the inputs has no history here (torch may
    # still give it one): its second derivative is zero.
    tt_pairs = [(g, w) for (g, _), w in zip(second, weights, strict=False) if g.requires_grad]
    tt_second = tt.autograd.grad([g for g, _ in tt_pairs], [tt_in[i] for i in chosen],
                                 [tt.tensor(w) for _, w in tt_pairs], allow_unused=True) if tt_pairs else (
        [None] * len(chosen))
    for i, got, expected in zip(chosen, tt_second, th_second, strict=False):
        if expected is None or got is None:
            assert expected is None or not np.any(_materialized(expected).numpy()), (
                f"input {i}: t_tensor gives no second-order gradient, torch a nonzero one")
            assert got is None or not np.any(np.asarray(got)), f"input {i}: torch gives no second-order gradient"
            continue
        _compare(got, _materialized(expected), atol, rtol, "torch")


def _materialized(tensor: torch.Tensor) -> torch.Tensor:
    """A plain tensor (torch returns lazy ZeroTensors for some second derivatives)."""
    return torch.tensor(tensor.detach().numpy(force=True))


def lib_of(a: Any) -> Any:
    """The library a tensor belongs to (t_tensor or torch), for tests that call one function name on both."""
    return tt if isinstance(a, tt.Tensor) else torch


def random_arrays(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    """Standard-normal float64 arrays of the given shapes, from one seeded generator."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


@contextlib.contextmanager
def num_threads(n: int) -> Iterator[None]:
    """Run the block with ``tt.set_num_threads(n)``, restoring the previous count after."""
    before = tt.get_num_threads()
    tt.set_num_threads(n)
    try:
        yield
    finally:
        tt.set_num_threads(before)


# Float32 accuracy (tests/ops/test_vmath.py, tests/ops/test_wide_math.py)

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1.1754944e-38,
                     3.4028235e38, -3.4028235e38, 88.72283, 88.72284, -87.33655, -103.97208, -103.97209],
                    dtype=np.float32)


def sweep_inputs(interval: tuple[float, float], n: int = 1 << 20) -> np.ndarray:
    """2^20 float32 values evenly spaced in bit pattern over all finite floats of both signs, a
    dense linear sweep of `interval`, and the special values."""
    positive = np.linspace(0, 0x7F7FFFFF, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    linear = np.linspace(interval[0], interval[1], n, dtype=np.float64).astype(np.float32)
    return np.concatenate([positive, -positive, linear, SPECIALS])


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many float32 values lie between a and b (both finite float32 arrays)."""
    def ordered(v: np.ndarray) -> np.ndarray:
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(a) - ordered(b))


# C paths under other Python code (tests/core/test_dispatch.py, tests/core/test_dispatch_kernels.py)

def collecting_at_every_allocation(callback: Callable, fn: Callable) -> Any:
    """fn() with a collection at (nearly) every allocation of a tracked object, each running
    callback(phase, info) first, as gc callbacks are run."""
    import gc

    threshold = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(1)
    try:
        return fn()
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(callback)


def results_of_threads(work: Callable[[], Any], threads: int, calls: int) -> list:
    """Run `work` `calls` times on each of `threads` threads at once; every result, or the first
    exception raised in a thread (re-raised here)."""
    import threading

    results, errors = [], []

    def run() -> None:
        try:
            for _ in range(calls):
                results.append(work())
        except Exception as error:  # noqa: BLE001 - re-raised below
            errors.append(error)

    started = [threading.Thread(target=run) for _ in range(threads)]
    for t in started:
        t.start()
    for t in started:
        t.join()
    if errors:
        raise errors[0]
    return results

"""Linear algebra products: ``matmul`` (``@``), ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``, ``inner``,
``outer``, ``vecdot``, ``tensordot``, ``einsum``, ``trace`` and ``matrix_transpose``.

Every product ends in one C call, ``tt_matmul`` (``csrc/src/kernels/matmul.c``): a batch of
``C = A @ B`` over any strides, batch dims included. So a transposed, sliced or broadcast operand
is read where it lies, and a batch dim that broadcasts gets stride 0 instead of a copy. What this
module does is reduce each function to that call: a 1-D operand becomes a matrix with one row or
one column (stride 0 along the new dim), batch dims are broadcast, and ``tensordot`` and ``einsum``
permute and reshape their operands into matrices.

As in PyTorch, a product needs both operands to have the same dtype (there is no promotion:
``float32 @ float64`` is an error), and bool operands are refused. Integers wrap on overflow, in
their own width; float16 accumulates in float32 and is rounded once.

This module is also the ``t_tensor.linalg`` namespace (``tt.linalg.matmul``, ``tt.linalg.vecdot``,
``tt.linalg.tensordot``, ``tt.linalg.outer``, ``tt.linalg.matrix_transpose``).

>>> import t_tensor as tt
>>> a = tt.arange(6.0).view(2, 3)
>>> (a @ a.T).tolist(), tt.linalg.vecdot(a, a).tolist()
([[5.0, 14.0], [14.0, 50.0]], [5.0, 50.0])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from t_tensor import dtypes, manipulation, reductions
from t_tensor import strides as S
from t_tensor._capi import check, lib
from t_tensor.autograd.function import FUNCTIONS
from t_tensor.autograd.grad_mode import STATE as _GRAD
from t_tensor.autograd.grad_mode import wants_grad
from t_tensor.autograd.graph import bump_version
from t_tensor.elementwise import binary
from t_tensor.tensor_impl import TensorImpl

__all__ = [
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "vecdot", "tensordot", "einsum",
    "matrix_transpose",
]  # fmt: skip


# ---------------------------------------------------------------------- shared steps


def _tensor(x: Any, fn: str, name: str) -> Any:
    if not isinstance(x, TensorImpl):
        raise TypeError(f"{fn}: expected a Tensor for argument '{name}', got {type(x).__name__}")
    return x


def _shape_str(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


def _check_dtypes(fn: str, a: TensorImpl, b: TensorImpl, mismatch: str | None = None, trivial: bool = False) -> None:
    """Products take two operands of one dtype, and not bool (as PyTorch). Also as PyTorch, a bool
    product is allowed when it is ``trivial``: an empty result or an empty sum (all False); a
    0-d result (a dot product) is never trivial."""
    if a._dtype is not b._dtype:
        detail = mismatch or "expected both operands to have the same dtype, but got {a} and {b}"
        raise RuntimeError(f"{fn}: " + detail.format(a=a._dtype.name, b=b._dtype.name))
    if a._dtype is dtypes.bool and not trivial:
        raise TypeError(f"{fn}: not implemented for bool tensors")


def _trivial(shape: tuple[int, ...], k: int) -> bool:
    """An empty result, or a non-0-d result of empty sums (see _check_dtypes)."""
    return 0 in shape or (k == 0 and len(shape) > 0)


def _gemm(a: TensorImpl, a_strides: tuple, b: TensorImpl, b_strides: tuple, batch: tuple[int, ...],
          m: int, n: int, k: int, shape: tuple[int, ...], fn: str, out: Any = None) -> Any:
    """The C call: a new tensor of ``shape`` (same memory layout as a contiguous ``batch + (m, n)``)
    holding ``A @ B``, where A is ``a`` seen as ``batch + (m, k)`` through ``a_strides`` and B is ``b``
    seen as ``batch + (k, n)`` through ``b_strides`` (batch strides first, then row and column).
    Under autograd the same product goes through the differentiable matmul of the two views.
    ``out`` (the caller's, or None): written in place and returned when ``_writes_into`` allows."""
    if wants_grad(a, b):
        view_a = a._view(batch + (m, k), tuple(a_strides), a._offset)
        view_b = b._view(batch + (k, n), tuple(b_strides), b._offset)
        return _matmul(view_a, view_b, fn).reshape(shape)
    if a._dtype is not dtypes.bool and _writes_into(out, a, b, shape):
        # C's strides are out's, with a 0 stride for the size-1 row or column a 1-D operand added
        nb = len(batch)
        result, c_strides = out, out._strides[:nb] + _row_and_column(out._strides[nb:], m)
    else:
        result = type(a)._empty(shape, a._dtype, fn)
        if a._dtype is dtypes.bool:  # only a trivial product gets here: no element, or all False
            return result._fill_unchecked(False)
        c_strides = S.contiguous_strides_of_valid_shape(batch + (m, n))
    status = lib.tt_matmul(
        a._dtype.code, len(batch), batch, m, n, k,
        a.data_ptr(), a_strides, b.data_ptr(), b_strides, result.data_ptr(), c_strides, 0,
    )
    check(status, fn)
    return result


def _writes_into(out: Any, a: TensorImpl, b: TensorImpl, shape: tuple[int, ...]) -> bool:
    """Whether a product of ``shape`` can be written straight into the caller's ``out`` (then its
    version is bumped): the result's dtype and shape, no element twice, no byte shared with an
    operand (the kernel reads them while it writes), and nothing for autograd to record. Anything
    else is computed into a new tensor that ``_finish`` checks and copies (or refuses)."""
    if out is None or not isinstance(out, TensorImpl) or out._dtype is not a._dtype or out._shape != shape or (
            out._ag is not None or out._has_internal_overlap() or out._overlaps(a)
            or out._overlaps(b)):
        return False
    bump_version(out)  # an in-place write: autograd's saved copies of `out` are now stale
    return True


def _row_and_column(tail: tuple, m: int) -> tuple:
    """C's row and column strides, from the strides of the result's last dims: (m, n), or (n,)
    after a 1-D first operand (m = 1), (m,) after a 1-D second one, () after two. A dim a 1-D
    operand dropped has size 1, so its stride is never used: 0."""
    if len(tail) == 2:
        return tail
    if len(tail) == 1:
        return (0, tail[0]) if m == 1 else (tail[0], 0)
    return (0, 0)


def _linear(input: TensorImpl, weight: TensorImpl, bias: TensorImpl | None) -> Any:
    """``input @ weight.T + bias`` for a 2-D input (m, k), weight (n, k) and bias (n,) or None,
    all of one float dtype and no size 0, in one C call (no autograd: see nn.functional.linear).
    The weight is read transposed where it lies, and tt_linear writes the bias into each tile of
    the result just before the product adds to it, as PyTorch's addmm, instead of a pass of its
    own over the result (a (256, 512) output: ~50 us less than presetting it to the bias)."""
    m, k = input._shape
    n = weight._shape[0]
    result = type(input)._empty((m, n), input._dtype, "linear")
    status = lib.tt_linear(
        input._dtype.code, m, n, k, input.data_ptr(), input._strides[0], input._strides[1],
        weight.data_ptr(), weight._strides[1], weight._strides[0],
        0 if bias is None else bias.data_ptr(), 0 if bias is None else bias._strides[0], result.data_ptr(), n, 1,
    )
    check(status, "linear")
    return result


def _finish(fn: str, result: Any, out: Any) -> Any:
    """Return ``result``, or copy it into the caller's ``out`` (same shape and dtype required),
    unless the product was written there already."""
    if out is None or result is out:
        return result
    if not isinstance(out, TensorImpl):
        raise TypeError(f"{fn}: out must be a Tensor, got {type(out).__name__}")
    if out._dtype is not result._dtype:
        raise RuntimeError(
            f"{fn}: Expected out tensor to have dtype {result._dtype.name}, but got {out._dtype.name} instead"
        )
    if out._shape != result._shape:
        raise RuntimeError(f"{fn}: out has shape {list(out._shape)}, but the result has shape {list(result._shape)}")
    return out.copy_(result)


# ---------------------------------------------------------------------- matrix products


def _matmul(a: Any, b: Any, fn: str, out: Any = None) -> Any:
    """NumPy/PyTorch matmul rules: 1-D operands get a dim prepended (a) or appended (b) that the
    result drops again, and the batch dims (all but the last two) broadcast. ``out``: the caller's
    out= tensor, written in place when ``_writes_into`` allows (else ignored: see ``_finish``)."""
    if type(a) is type(b) and len(a._shape) == 2 == len(b._shape) and a._dtype is b._dtype and (
            a._dtype is dtypes.float32 or a._dtype is dtypes.float64) and a._shape[1] == b._shape[0] and (
            a._ag is b._ag is None or not _GRAD.enabled):
        # two float matrices of one dtype, nothing to record: straight to the C call (the rules
        # below cost ~2 us, most of a small product such as (64, 10) @ (10, 64))
        (m, k), n = a._shape, b._shape[1]
        if out is not None and _writes_into(out, a, b, (m, n)):
            result = out
        else:
            result = type(a)._empty((m, n), a._dtype, fn)
        check(lib.tt_matmul(a._dtype.code, 0, (), m, n, k, a.data_ptr(), a._strides, b.data_ptr(), b._strides,
                            result.data_ptr(), result._strides, 0), fn)
        return result
    if wants_grad(a, b):
        return FUNCTIONS["Matmul"].apply(a, b, fn)
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"{fn}: both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1 and a._shape != b._shape:
        raise RuntimeError(
            f"{fn}: inconsistent tensor size, expected tensor [{a._shape[0]}] and src [{b._shape[0]}] to have the "
            f"same number of elements, but got {a._shape[0]} and {b._shape[0]} elements respectively"
        )
    a_shape, a_strides = ((1,) + a._shape, (0,) + a._strides) if da == 1 else (a._shape, a._strides)
    b_shape, b_strides = (b._shape + (1,), b._strides + (0,)) if db == 1 else (b._shape, b._strides)
    m, k = a_shape[-2:]
    n = b_shape[-1]
    if b_shape[-2] != k:
        raise RuntimeError(
            f"{fn}: mat1 and mat2 shapes cannot be multiplied ({_shape_str(a._shape)} and {_shape_str(b._shape)})"
        )
    batch = a_shape[:-2]
    if batch != b_shape[:-2]:  # equal batch dims (the common case) need no broadcasting
        batch = S.broadcast_shapes(a_shape[:-2], b_shape[:-2], fn=fn)
        a_strides = S.expand_strides(a_shape[:-2], a_strides[:-2], batch, fn=fn) + a_strides[-2:]
        b_strides = S.expand_strides(b_shape[:-2], b_strides[:-2], batch, fn=fn) + b_strides[-2:]
    shape = batch + ((m,) if da > 1 else ()) + ((n,) if db > 1 else ())
    mismatch = "expected m1 and m2 to have the same dtype, but got: {a} != {b}"
    _check_dtypes(fn, a, b, mismatch, _trivial(shape, k))
    return _gemm(a, a_strides, b, b_strides, batch, m, n, k, shape, fn, out)


def matmul(input: Any, other: Any, *, out: Any = None) -> Any:
    """Matrix product with NumPy's rules (the ``@`` operator).

    1-D @ 1-D is a dot product (0-d result); a 1-D first operand is a row vector and a 1-D second
    operand a column vector, whose added dim is removed from the result; for 3 or more dims the
    leading (batch) dims broadcast. Both operands must have the same dtype.

    >>> import t_tensor as tt
    >>> a = tt.ones(5, 1, 2, 3)
    >>> (a @ tt.ones(4, 3, 2)).shape, (a @ tt.ones(3)).shape, (tt.ones(3) @ tt.ones(3)).shape
    ((5, 4, 2, 2), (5, 1, 2), ())
    """
    input, other = _tensor(input, "matmul", "input"), _tensor(other, "matmul", "other")
    return _finish("matmul", _matmul(input, other, "matmul", out), out)


def mm(input: Any, mat2: Any, *, out: Any = None) -> Any:
    """Product of two matrices (2-D only; no broadcasting).

    >>> import t_tensor as tt
    >>> tt.mm(tt.tensor([[1, 2]]), tt.tensor([[3], [4]])).tolist()
    [[11]]
    """
    input, mat2 = _tensor(input, "mm", "input"), _tensor(mat2, "mm", "mat2")
    if input.ndim != 2:
        raise RuntimeError(f"mm: self must be a matrix, got a {input.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mm: mat2 must be a matrix, got a {mat2.ndim}-D tensor")
    return _finish("mm", _matmul(input, mat2, "mm", out), out)


def bmm(input: Any, mat2: Any, *, out: Any = None) -> Any:
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting).

    >>> import t_tensor as tt
    >>> tt.bmm(tt.ones(4, 2, 3), tt.ones(4, 3, 5)).shape
    (4, 2, 5)
    """
    input, mat2 = _tensor(input, "bmm", "input"), _tensor(mat2, "bmm", "mat2")
    if input.ndim != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor, got a {input.ndim}-D tensor")
    if mat2.ndim != 3:
        raise RuntimeError(f"bmm: batch2 must be a 3D tensor, got a {mat2.ndim}-D tensor")
    expected = [input._shape[0], input._shape[2]]
    if list(mat2._shape[:2]) != expected:
        raise RuntimeError(
            f"bmm: Expected size for first two dimensions of batch2 tensor to be: {expected} "
            f"but got: {list(mat2._shape[:2])}."
        )
    shape = (input._shape[0], input._shape[1], mat2._shape[2])
    _check_dtypes("bmm", input, mat2, "expected scalar type {a} but found {b}", _trivial(shape, input._shape[2]))
    return _finish("bmm", _matmul(input, mat2, "bmm", out), out)


def mv(input: Any, vec: Any, *, out: Any = None) -> Any:
    """Matrix-vector product: a 2-D ``input`` times a 1-D ``vec``.

    >>> import t_tensor as tt
    >>> tt.mv(tt.tensor([[1, 2], [3, 4]]), tt.tensor([1, 1])).tolist()
    [3, 7]
    """
    input, vec = _tensor(input, "mv", "input"), _tensor(vec, "mv", "vec")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: expected a matrix and a vector, but got {input.ndim}-D and {vec.ndim}-D tensors")
    if input._shape[1] != vec._shape[0]:
        raise RuntimeError(f"mv: size mismatch, got mat ({_shape_str(input._shape)}), vec ({vec._shape[0]})")
    return _finish("mv", _matmul(input, vec, "mv"), out)


def _check_vectors(fn: str, a: Any, b: Any) -> None:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"{fn}: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    _check_dtypes(fn, a, b, "expected both vectors to have same dtype, but found {a} and {b}")


def dot(input: Any, tensor: Any, *, out: Any = None) -> Any:
    """Dot product of two 1-D tensors of the same size and dtype (a 0-d result).

    >>> import t_tensor as tt
    >>> tt.dot(tt.tensor([1, 2, 3]), tt.tensor([4, 5, 6])).item()
    32
    """
    input, tensor = _tensor(input, "dot", "input"), _tensor(tensor, "dot", "tensor")
    _check_vectors("dot", input, tensor)
    return _finish("dot", _matmul(input, tensor, "dot"), out)


def vdot(input: Any, other: Any, *, out: Any = None) -> Any:
    """Dot product of two 1-D tensors, conjugating the first (real dtypes only here, so it is :func:`dot`).

    >>> import t_tensor as tt
    >>> tt.vdot(tt.tensor([1.0, 2.0]), tt.tensor([3.0, 4.0])).item()
    11.0
    """
    input, other = _tensor(input, "vdot", "input"), _tensor(other, "vdot", "other")
    _check_vectors("vdot", input, other)
    return _finish("vdot", _matmul(input, other, "vdot"), out)


def inner(input: Any, other: Any, *, out: Any = None) -> Any:
    """Sum of products over the last dim of both; the result has shape
    ``input.shape[:-1] + other.shape[:-1]``. A 0-d operand multiplies elementwise instead.

    >>> import t_tensor as tt
    >>> tt.inner(tt.tensor([[1, 2], [3, 4]]), tt.tensor([1, 10])).tolist()
    [21, 43]
    """
    input, other = _tensor(input, "inner", "input"), _tensor(other, "inner", "other")
    if input.ndim == 0 or other.ndim == 0:
        return _finish("inner", binary("mul", input, other), out)
    if input._shape[-1] != other._shape[-1]:
        raise RuntimeError(
            f"inner: the last dimension must match on both input tensors but got shapes "
            f"{list(input._shape)} and {list(other._shape)}"
        )
    return _finish("inner", _tensordot(input, other, [input.ndim - 1], [other.ndim - 1], "inner"), out)


def outer(input: Any, vec2: Any, *, out: Any = None) -> Any:
    """Outer product of two 1-D tensors: ``result[i, j] = input[i] * vec2[j]`` (dtypes promote, as ``*``).

    >>> import t_tensor as tt
    >>> tt.outer(tt.tensor([1, 2]), tt.tensor([1, 10, 100])).tolist()
    [[1, 10, 100], [2, 20, 200]]
    """
    input, vec2 = _tensor(input, "outer", "input"), _tensor(vec2, "outer", "vec2")
    for name, x in (("self", input), ("vec2", vec2)):
        if x.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {x.ndim}-D")
    column = input._view((input._shape[0], 1), (input._strides[0], 0), input._offset)
    return _finish("outer", binary("mul", column, vec2), out)


def vecdot(x1: Any, x2: Any, /, *, dim: int = -1, axis: int | None = None, out: Any = None) -> Any:
    """Dot products of vectors along ``dim`` (alias ``axis``), after broadcasting ``x1`` and ``x2``.

    As ``torch.linalg.vecdot``: floating-point operands of one dtype, and two 1-D operands must have
    the same length (they do not broadcast).

    >>> import t_tensor as tt
    >>> tt.linalg.vecdot(tt.tensor([[1.0, 2.0], [3.0, 4.0]]), tt.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    fn = "vecdot"
    x1, x2 = _tensor(x1, fn, "x1"), _tensor(x2, fn, "x2")
    if axis is not None:
        dim = axis
    if x1._dtype is not x2._dtype:
        raise RuntimeError(
            f"{fn}: Expected x and y to have the same dtype, but found x of type {x1._dtype.name} and y of type "
            f"{x2._dtype.name} instead"
        )
    if not x1._dtype.is_floating_point:
        raise TypeError(f"{fn}: Expected a floating point tensor as input. Got {x1._dtype.name}")
    if x1.ndim == 1 and x2.ndim == 1 and x1._shape != x2._shape:  # two vectors: a dot product, as PyTorch
        raise RuntimeError(
            f"{fn}: inconsistent tensor size, expected tensor [{x1._shape[0]}] and src [{x2._shape[0]}] to have "
            f"the same number of elements, but got {x1._shape[0]} and {x2._shape[0]} elements respectively"
        )
    shape = S.broadcast_shapes(x1._shape, x2._shape, fn=fn)
    d = S.normalize_dim(dim, len(shape), fn=fn)
    s1 = S.expand_strides(x1._shape, x1._strides, shape, fn=fn)
    s2 = S.expand_strides(x2._shape, x2._strides, shape, fn=fn)
    if not shape:  # 0-d: one vector of length 1
        shape, s1, s2 = (1,), (0,), (0,)
    batch = shape[:d] + shape[d + 1 :]
    rest1, rest2 = s1[:d] + s1[d + 1 :], s2[:d] + s2[d + 1 :]
    result = _gemm(x1, rest1 + (0, s1[d]), x2, rest2 + (s2[d], 0), batch, 1, 1, shape[d], batch, fn)
    return _finish(fn, result, out)


# ---------------------------------------------------------------------- tensordot


def _is_int(value: Any) -> bool:
    return hasattr(value, "__index__") and not isinstance(value, (bool, np.bool_, TensorImpl))


def _dims_list(value: Any, fn: str) -> list[int]:
    if isinstance(value, TensorImpl):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not all(_is_int(d) for d in value):
        raise TypeError(f"{fn}: dims must be an int or a pair of sequences of ints, got {value!r}")
    return [int(d) for d in value]


def _tensordot_dims(a: Any, b: Any, dims: Any, fn: str) -> tuple[list[int], list[int]]:
    """The contracted dims of a and b, checked and normalized."""
    if isinstance(dims, TensorImpl):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if _is_int(dims):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"{fn}: tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"{fn}: tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise RuntimeError(
            f"{fn}: tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing "
            f"two lists, but got dims={dims!r}"
        )
    dims_a, dims_b = _dims_list(dims[0], fn), _dims_list(dims[1], fn)
    if len(dims_a) != len(dims_b):
        raise RuntimeError(f"{fn}: both dimension lists should have same length")
    return list(S.normalize_dims(tuple(dims_a), a.ndim, fn=fn)), list(S.normalize_dims(tuple(dims_b), b.ndim, fn=fn))


def _tensordot(a: Any, b: Any, dims_a: list[int], dims_b: list[int], fn: str) -> Any:
    """Contract dims_a of a with dims_b of b: both become matrices (free dims x contracted dims),
    one product, the result has a's free dims then b's. A contracted dim of size 1 on one side
    broadcasts against the other side's size (stride 0), as in PyTorch."""
    sizes = []
    for da, db in zip(dims_a, dims_b, strict=True):
        sa, sb = a._shape[da], b._shape[db]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(
                f"{fn}: contracted dimensions need to match, but first has size {sa} in dim {da} and second has "
                f"size {sb} in dim {db}"
            )
        sizes.append(sb if sa == 1 else sa)
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]

    def as_matrix(x: Any, free: list[int], contracted: list[int], contracted_first: bool) -> Any:
        free_part = ([x._shape[d] for d in free], [x._strides[d] for d in free])
        con_part = (sizes, [x._strides[d] if x._shape[d] == s else 0 for d, s in zip(contracted, sizes, strict=True)])
        first, second = (con_part, free_part) if contracted_first else (free_part, con_part)
        view = x._view(tuple(first[0] + second[0]), tuple(first[1] + second[1]), x._offset)
        return view.reshape(math.prod(first[0]), math.prod(second[0]))

    shape = tuple(a._shape[d] for d in free_a) + tuple(b._shape[d] for d in free_b)
    mismatch = "both inputs should have same dtype, but got {a} and {b}"
    _check_dtypes(fn, a, b, mismatch, _trivial(shape, math.prod(sizes)))
    ma = as_matrix(a, free_a, dims_a, False)
    mb = as_matrix(b, free_b, dims_b, True)
    m, k = ma._shape
    n = mb._shape[1]
    return _gemm(ma, ma._strides, mb, mb._strides, (), m, n, k, shape, fn)


def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None, *, axes: Any = None) -> Any:
    """Sum of products over ``dims``: an int ``d`` (the last ``d`` dims of ``a`` with the first ``d`` of
    ``b``) or a pair of lists of dims. ``axes`` is the array API's name for ``dims``.

    >>> import t_tensor as tt
    >>> a, b = tt.ones(2, 3, 4), tt.ones(3, 4, 5)
    >>> tt.tensordot(a, b).shape, tt.tensordot(a, b, dims=([1], [0])).shape, tt.tensordot(a, b, 0).shape
    ((2, 5), (2, 4, 4, 5), (2, 3, 4, 3, 4, 5))
    """
    a, b = _tensor(a, "tensordot", "a"), _tensor(b, "tensordot", "b")
    dims_a, dims_b = _tensordot_dims(a, b, dims if axes is None else axes, "tensordot")
    return _finish("tensordot", _tensordot(a, b, dims_a, dims_b, "tensordot"), out)


# ---------------------------------------------------------------------- trace, transpose


def matrix_transpose(x: Any, /) -> Any:
    """The last two dims swapped (a view; the array API's name for ``x.mT``).

    >>> import t_tensor as tt
    >>> tt.linalg.matrix_transpose(tt.zeros(4, 2, 3)).shape
    (4, 3, 2)
    """
    x = _tensor(x, "matrix_transpose", "x")
    if x.ndim < 2:
        raise RuntimeError(f"matrix_transpose: expected a tensor with at least 2 dimensions, got {x.ndim}-D")
    return x.transpose(-2, -1)


# ---------------------------------------------------------------------- the tt.linalg namespace
# ``tt.linalg`` is this module. Besides the products above it holds the array API's linalg extension
# functions that issue 3 provides (the norms come from the reductions family); these follow
# ``torch.linalg`` / the standard, which differ from the top-level functions of the same name:
# ``tt.linalg.diagonal`` takes the last two dims (``tt.diagonal`` the first two), ``tt.linalg.trace``
# is batched with ``offset=`` (``tt.trace`` takes matrices only). Factorizations and solvers (inv,
# solve, qr, svd, ...) are not provided yet.

vector_norm = reductions.vector_norm
matrix_norm = reductions.matrix_norm


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """``torch.linalg.norm``: a vector norm over one dim (or of a 1-D input), a matrix norm over two
    dims (or of a 2-D input); with ``ord=None`` the 2-norm of everything flattened.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[3.0, 4.0], [0.0, 0.0]])
    >>> tt.linalg.norm(x).item(), tt.linalg.norm(x, 1).item(), tt.linalg.norm(x, dim=1).tolist()
    (5.0, 4.0, [5.0, 0.0])
    """
    fn = "linalg.norm"
    A = _tensor(A, fn, "A")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.ndim not in (1, 2):
            raise RuntimeError(f"{fn}: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    dim = tuple(dim)
    if len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    raise RuntimeError(f"{fn}: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")


def svdvals(A: Any, /) -> Any:
    """The singular values of the matrices in the last two dims, descending (one-sided Jacobi in C).

    >>> import t_tensor as tt
    >>> tt.linalg.svdvals(tt.tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    fn = "linalg.svdvals"
    A = _tensor(A, fn, "A")
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A._dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{fn}: Expected a float32 or float64 tensor, got {A._dtype.name}")
    if wants_grad(A):
        raise RuntimeError(f"{fn}: the gradient of the singular values is not implemented")
    return reductions.singular_values(A, A.ndim - 2, A.ndim - 1, fn)


def diagonal(A: Any, /, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """The diagonal of the matrices in the last two dims (``torch.linalg.diagonal``), a view.

    >>> import t_tensor as tt
    >>> tt.linalg.diagonal(tt.arange(8).view(2, 2, 2)).tolist()
    [[0, 3], [4, 7]]
    """
    return manipulation.diagonal(_tensor(A, "linalg.diagonal", "A"), offset, dim1, dim2)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The array API's ``linalg.trace``: the sum of each matrix's diagonal (``offset`` above or below
    the main one) over the last two dims, batched; integers sum in int64.

    >>> import t_tensor as tt
    >>> tt.linalg.trace(tt.arange(8).view(2, 2, 2)).tolist(), tt.linalg.trace(tt.eye(3), offset=1).item()
    ([3, 11], 0.0)
    """
    x = _tensor(x, "linalg.trace", "x")
    if x.ndim < 2:
        raise RuntimeError(f"linalg.trace: expected a tensor with at least 2 dimensions, got {x.ndim}-D")
    return reductions.sum(manipulation.diagonal(x, offset, -2, -1), -1, dtype=dtype)


def cross(x1: Any, x2: Any, /, *, dim: int | None = None, axis: int = -1) -> Any:
    """The cross product of 3-vectors along ``axis`` (``dim=`` as ``torch.linalg.cross``), broadcast.

    >>> import t_tensor as tt
    >>> tt.linalg.cross(tt.tensor([1.0, 0.0, 0.0]), tt.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    fn = "linalg.cross"
    a, b = _tensor(x1, fn, "x1"), _tensor(x2, fn, "x2")
    if a.ndim != b.ndim:
        raise RuntimeError(f"{fn}: inputs must have the same number of dimensions, got {a.ndim} and {b.ndim}")
    axis = axis if dim is None else dim
    a, b = manipulation.broadcast_arrays(a, b) if a._shape != b._shape else (a, b)
    d = S.normalize_dim(axis, a.ndim, fn=fn)
    if a._shape[d] != 3:
        raise RuntimeError(f"{fn}: inputs dimension {axis} must have length 3, got {a._shape[d]}")
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    return manipulation.stack(parts, d)


# ---------------------------------------------------------------------- einsum

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS  # label codes: A-Z are 0-25, a-z 26-51 (the implicit output's order)


def _label_code(ch: str) -> int:
    return ord(ch) - ord("A") if ch.isupper() else ord(ch) - ord("a") + _LETTERS


def _label_char(code: int) -> str:
    return chr(code + ord("A")) if code < _LETTERS else chr(code - _LETTERS + ord("a"))


def _is_label(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _parse_inputs(lhs: str, nops: int) -> list[list[int]]:
    labels: list[list[int]] = [[] for _ in range(nops)]
    current, ellipsis, i = 0, False, 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == ".":
            if ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an ellipsis was already found")
            if lhs[i : i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part of any ellipsis")
            labels[current].append(_ELLIPSIS)
            ellipsis, i = True, i + 2
        elif ch == ",":
            current += 1
            if current >= nops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ellipsis = False
        elif _is_label(ch):
            labels[current].append(_label_code(ch))
        elif ch != " ":
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, subscripts must be in [a-zA-Z]"
            )
        i += 1
    if current != nops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


def _sumproduct_pair(left: Any, right: Any, sum_dims: list[int]) -> Any:
    """``(left * right)`` summed over ``sum_dims`` (kept as size 1), both operands having the same
    number of dims: a product over dims summed and one batched matrix product."""
    if not sum_dims:
        return binary("mul", left, right)
    lro, lo, ro = [], [], []  # dims in left, right and output; left and output only; right and output only
    sum_size = 1
    for i in range(left.ndim):
        in_left, in_right = left._shape[i] != 1, right._shape[i] != 1
        if i in sum_dims:
            if in_left and in_right:
                sum_size *= left._shape[i]
            elif in_left:
                left = reductions.sum(left, i, True)
            elif in_right:
                right = reductions.sum(right, i, True)
        elif in_left and in_right:
            lro.append(i)
        elif in_left:
            lo.append(i)
        else:
            ro.append(i)
    lro_size = math.prod(left._shape[d] for d in lro)
    lo_size = math.prod(left._shape[d] for d in lo)
    ro_size = math.prod(right._shape[d] for d in ro)
    trivial = lro_size * lo_size * ro_size == 0 or sum_size == 0
    _check_dtypes("einsum", left, right, "expected scalar type {a} but found {b}", trivial)
    a = left.permute(*lro, *lo, *sum_dims, *ro).reshape(lro_size, lo_size, sum_size)
    b = right.permute(*lro, *sum_dims, *ro, *lo).reshape(lro_size, sum_size, ro_size)
    batch = (lro_size,)
    shape = tuple(left._shape[d] for d in lro + lo) + (1,) * len(sum_dims) + tuple(right._shape[d] for d in ro)
    result = _gemm(a, a._strides, b, b._strides, batch, lo_size, ro_size, sum_size, shape, "einsum")
    order = lro + lo + sum_dims + ro
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    return result.permute(*inverse)


def einsum(equation: str, *operands: Any) -> Any:
    """Einstein summation: ``'ij,jk->ik'`` is a matrix product, ``'ii->i'`` a diagonal, ``'ii'`` a
    trace, ``'bij,bjk->bik'`` a batched product, ``'...ij->...ji'`` a transpose of the last two
    dims. Without ``->`` the output has the ellipsis dims and then the labels that appear once,
    in alphabetical order (uppercase first). Labels of size 1 broadcast.

    Operands are contracted left to right, as PyTorch does without opt_einsum, so the result
    dtype follows PyTorch too: a label summed from one operand alone sums as ``sum`` does
    (integers give int64) and a contraction of two operands needs equal dtypes.

    >>> import t_tensor as tt
    >>> a = tt.arange(4.0).view(2, 2)
    >>> tt.einsum('ij,jk->ik', a, a).tolist(), tt.einsum('ii', a).item(), tt.einsum('ii->i', a).tolist()
    ([[2.0, 3.0], [6.0, 11.0]], 3.0, [0.0, 3.0])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a string, got {type(equation).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for i, op in enumerate(operands):
        _tensor(op, "einsum()", f"operand {i}")
    nops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    labels = _parse_inputs(lhs, nops)

    # how often each label occurs, and how many dims the ellipsis covers at most
    count = [0] * _ELLIPSIS
    ell_ndim = 0
    for i, (op, op_labels) in enumerate(zip(operands, labels, strict=True)):
        nlabels = sum(1 for c in op_labels if c != _ELLIPSIS)
        has_ellipsis = _ELLIPSIS in op_labels
        for c in op_labels:
            if c != _ELLIPSIS:
                count[c] += 1
        if has_ellipsis:
            ell_ndim = max(ell_ndim, op.ndim - nlabels)
        if (nlabels > op.ndim) if has_ellipsis else (nlabels != op.ndim):
            relation = "is more than" if has_ellipsis else "does not match"
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) {relation} the number of dimensions "
                f"({op.ndim}) for operand {i}" + ("" if has_ellipsis else " and no ellipsis was given")
            )

    # every operand is aligned to one dim order: the output's dims first, then the summed ones
    position = [-1] * _ELLIPSIS
    nextpos, ell_pos, ell_in_output = 0, 0, False
    if arrow < 0:
        nextpos, ell_in_output = ell_ndim, True
        for c in range(_ELLIPSIS):
            if count[c] == 1:
                position[c], nextpos = nextpos, nextpos + 1
    else:
        rhs = equation[arrow + 2 :]
        i = 0
        while i < len(rhs):
            ch = rhs[i]
            if ch == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if rhs[i : i + 3] != "...":
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                ell_pos, nextpos, ell_in_output, i = nextpos, nextpos + ell_ndim, True, i + 2
            elif _is_label(ch):
                c = _label_code(ch)
                if count[c] == 0 or position[c] != -1:
                    problem = "appears more than once in the output" if position[c] != -1 else (
                        "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {ch} {problem}")
                position[c], nextpos = nextpos, nextpos + 1
            elif ch != " ":
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            i += 1
    out_ndim = nextpos
    if not ell_in_output:
        ell_pos, nextpos = nextpos, nextpos + ell_ndim
    for c in range(_ELLIPSIS):
        if count[c] > 0 and position[c] == -1:
            position[c], nextpos = nextpos, nextpos + 1
    total = nextpos

    # align: diagonals for repeated labels, size-1 dims for missing ones, then one permuted view
    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_ndim
    dim_counts = [0] * total
    ops = []
    for i, (op, op_labels) in enumerate(zip(operands, labels, strict=True)):
        shape, strides = list(op._shape), list(op._strides)
        source = [-1] * total  # source[p]: the dim of (shape, strides) at aligned position p
        dim = 0
        for c in op_labels:
            if c == _ELLIPSIS:
                covered = op.ndim - (len(op_labels) - 1)
                for j in range(ell_ndim - covered, ell_ndim):
                    if shape[dim] != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != shape[dim]:
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i} has size {shape[dim]} "
                                f"which does not broadcast with previously seen ellipsis with size {ell_sizes[j]} "
                                "for the respective dimension"
                            )
                        ell_sizes[j] = shape[dim]
                        dim_counts[ell_pos + j] += 1
                    source[ell_pos + j] = dim
                    dim += 1
            elif source[position[c]] == -1:
                if shape[dim] != 1:
                    if label_size[c] != 1 and label_size[c] != shape[dim]:
                        raise RuntimeError(
                            f"einsum(): subscript {_label_char(c)} has size {shape[dim]} for operand {i} which does "
                            f"not broadcast with previously seen size {label_size[c]}"
                        )
                    label_size[c] = shape[dim]
                    dim_counts[position[c]] += 1
                source[position[c]] = dim
                dim += 1
            else:  # a repeated label: keep the diagonal (one dim whose stride steps along both)
                first = source[position[c]]
                if shape[dim] != shape[first]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label_char(c)} is repeated for operand {i} but the sizes don't match, "
                        f"{shape[dim]} != {shape[first]}"
                    )
                strides[first] += strides[dim]
                del shape[dim], strides[dim]
        aligned_shape = tuple(1 if s < 0 else shape[s] for s in source)
        aligned_strides = tuple(0 if s < 0 else strides[s] for s in source)
        ops.append(op._view(aligned_shape, aligned_strides, op._offset))

    # contract left to right; a dim is summed as soon as no later operand has it
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_ndim, total):
            if a._shape[d] != 1 and b._shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a._shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b._shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = reductions.sum(a, tuple(a_sum), True)
        if b_sum:
            b = reductions.sum(b, tuple(b_sum), True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    result = ops[0]
    if total > out_ndim:
        if nops > 1:  # every summed dim has size 1 by now
            return result.reshape(result._shape[:out_ndim])
        return reductions.sum(result, tuple(range(out_ndim, total)), False)
    return result


# ---------------------------------------------------------------------- Tensor methods and operators


def _operand(value: Any) -> Any:
    """The other operand of ``@``: a tensor, a NumPy array (made a tensor), or None (not ours)."""
    if isinstance(value, TensorImpl):
        return value
    if isinstance(value, np.ndarray):
        from t_tensor.creation import as_tensor

        return as_tensor(value)
    return None


class LinalgOps:
    """Products mixed into :class:`~t_tensor.tensor.Tensor`: ``@`` and the methods of the same names.

    There is no ``__imatmul__`` (PyTorch has none): ``a @= b`` rebinds ``a`` to ``a @ b``.
    """

    __slots__ = ()

    def __matmul__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _matmul(self, other, "matmul")

    def __rmatmul__(self, other):
        other = _operand(other)
        return NotImplemented if other is None else _matmul(other, self, "matmul")

    def matmul(self, other, *, out=None): return matmul(self, other, out=out)
    def mm(self, mat2, *, out=None): return mm(self, mat2, out=out)
    def bmm(self, mat2, *, out=None): return bmm(self, mat2, out=out)
    def mv(self, vec, *, out=None): return mv(self, vec, out=out)
    def dot(self, tensor, *, out=None): return dot(self, tensor, out=out)
    def vdot(self, other, *, out=None): return vdot(self, other, out=out)
    def inner(self, other, *, out=None): return inner(self, other, out=out)
    def outer(self, vec2, *, out=None): return outer(self, vec2, out=out)

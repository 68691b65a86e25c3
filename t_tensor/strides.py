"""Shape and stride arithmetic for strided tensors (pure Python, no NumPy).

A tensor's elements live in a flat 1-D *storage*. A *view* of that storage is
described by three things:

* ``shape``   -- the size of each dimension, e.g. ``(2, 3)``;
* ``strides`` -- how many storage elements to skip to move one step along each
  dimension, e.g. ``(3, 1)`` for a row-major 2x3 matrix;
* ``offset``  -- where element ``[0, 0, ...]`` sits in the storage.

Element ``[i, j, ...]`` is found at ``offset + i*strides[0] + j*strides[1] + ...``.
Many operations (transpose, slicing, expand, ...) therefore need no copy at all:
they only compute a new ``(shape, strides, offset)`` for the same storage. This
module holds that arithmetic. Strides are counted in elements (not bytes) and are
never negative, as in PyTorch.

>>> contiguous_strides((2, 3))
(3, 1)
>>> transpose((2, 3), (3, 1), 0, 1)
((3, 2), (1, 3))
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

Shape = tuple[int, ...]
Strides = tuple[int, ...]

__all__ = [
    "Shape",
    "Strides",
    "as_strided_check",
    "basic_index",
    "broadcast_shapes",
    "chunk_sizes",
    "contiguous_strides",
    "contiguous_strides_of_valid_shape",
    "expand_strides",
    "has_internal_overlap",
    "index_to_offset",
    "infer_size",
    "is_contiguous",
    "narrow_check",
    "normalize_dim",
    "normalize_dims",
    "numel",
    "offset_to_index",
    "permute",
    "split_sizes",
    "squeeze",
    "storage_extent",
    "transpose",
    "unsqueeze",
    "view_strides",
]


# --------------------------------------------------------------------------- helpers


def _as_int(value: Any, what: str, fn: str) -> int:
    # bool has __index__, but True as a size or dim is almost always a bug.
    if isinstance(value, bool):
        raise TypeError(f"{fn}: {what} must be an integer, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}: {what} must be an integer, got {type(value).__name__}") from None


def _as_int_tuple(values: Any, what: str, fn: str) -> tuple[int, ...]:
    # Fast path: tensors pass their own shapes and strides, already tuples of plain ints, on every
    # view. `type(v) is int` also excludes bool, which the slow path rejects.
    if type(values) is tuple and all(type(v) is int for v in values):
        return values
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{fn}: {what} must be a sequence of integers, got {type(values).__name__}") from None
    return tuple(_as_int(v, what, fn) for v in items)


def _check_shape(shape: Sequence[int], fn: str, exc: type = ValueError) -> Shape:
    sizes = _as_int_tuple(shape, "size", fn)
    if sizes and min(sizes) < 0:
        raise exc(f"{fn}: negative dimension {min(sizes)} in shape {list(sizes)}")
    return sizes


def _check_layout(shape: Sequence[int], strides: Sequence[int], fn: str) -> tuple[Shape, Strides]:
    sizes = _check_shape(shape, fn)
    steps = _as_int_tuple(strides, "stride", fn)
    if len(sizes) != len(steps):
        raise ValueError(f"{fn}: shape {list(sizes)} and strides {list(steps)} have different lengths")
    return sizes, steps


# --------------------------------------------------------------------------- basics


def numel(shape: Sequence[int], *, fn: str = "numel") -> int:
    """Number of elements of a tensor with this shape (1 for a 0-d tensor).

    >>> numel((2, 3, 4)), numel(()), numel((5, 0))
    (24, 1, 0)
    """
    return math.prod(_check_shape(shape, fn))


def contiguous_strides(shape: Sequence[int], *, fn: str = "contiguous_strides") -> Strides:
    """Row-major (C order) strides for ``shape``.

    Size-0 dims count as size 1 when computing the strides of outer dims, as PyTorch does.

    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    >>> contiguous_strides((2, 0, 3))
    (3, 3, 1)
    """
    sizes = _check_shape(shape, fn)
    strides = []
    step = 1
    for s in reversed(sizes):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


@functools.lru_cache(maxsize=4096)
def contiguous_strides_of_valid_shape(shape: Shape) -> Strides:
    """:func:`contiguous_strides` for a shape already known to be a tuple of non-negative ints,
    memoized: new tensors are created with the same few shapes over and over.

    >>> contiguous_strides_of_valid_shape((2, 3))
    (3, 1)
    """
    return contiguous_strides(shape)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """True when the view is laid out row-major with no gaps (PyTorch semantics).

    Empty tensors are always contiguous and size-1 dims may have any stride,
    because they are never stepped along.

    >>> is_contiguous((2, 3), (3, 1)), is_contiguous((3, 2), (1, 3))
    (True, False)
    >>> is_contiguous((2, 1, 3), (3, 99, 1))
    True
    """
    sizes, steps = _check_layout(shape, strides, "is_contiguous")
    if math.prod(sizes) == 0:
        return True
    expected = 1
    for s, st in zip(reversed(sizes), reversed(steps), strict=True):
        if s != 1:
            if st != expected:
                return False
            expected *= s
    return True


def normalize_dim(dim: int, ndim: int, *, fn: str = "dim") -> int:
    """Turn a possibly negative ``dim`` into an index in ``[0, ndim)``.

    A 0-d tensor accepts ``dim`` in ``[-1, 0]`` (and gives 0), like PyTorch.

    >>> normalize_dim(-1, 3), normalize_dim(1, 3), normalize_dim(-1, 0)
    (2, 1, 0)
    """
    d = dim if type(dim) is int else _as_int(dim, "dim", fn)
    n = max(ndim if type(ndim) is int else _as_int(ndim, "ndim", fn), 1)
    if not -n <= d < n:
        raise IndexError(
            f"{fn}: dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
        )
    return d + n if d < 0 else d


def normalize_dims(dims: int | Sequence[int], ndim: int, *, fn: str = "dims") -> tuple[int, ...]:
    """Normalize each dim of ``dims`` (an int or a sequence) and reject repeats.

    >>> normalize_dims((0, -1), 3)
    (0, 2)
    >>> normalize_dims(-2, 3)
    (1,)
    """
    if hasattr(dims, "__index__"):
        dims = (dims,)
    n = max(ndim, 1)
    if type(dims) is tuple and all(type(d) is int and -n <= d < n for d in dims):
        # Fast path (every dim a plain in-range int): wrap negatives without a call per dim.
        result = tuple(d + n if d < 0 else d for d in dims)
    else:
        result = tuple(normalize_dim(d, ndim, fn=fn) for d in _as_int_tuple(dims, "dim", fn))
    if len(set(result)) != len(result):
        repeated = next(d for d in result if result.count(d) > 1)
        raise RuntimeError(f"{fn}: dim {repeated} appears multiple times in the list of dims")
    return result


# --------------------------------------------------------------------------- view / reshape


def infer_size(shape: Sequence[int], numel: int, *, fn: str = "view") -> Shape:
    """Resolve a single ``-1`` in ``shape`` so that it holds ``numel`` elements.

    >>> infer_size((2, -1), 6)
    (2, 3)
    >>> infer_size((-1,), 0)
    (0,)
    """
    sizes = _as_int_tuple(shape, "size", fn)
    total = _as_int(numel, "numel", fn)
    infer_at = None
    known = 1
    for i, s in enumerate(sizes):
        if s == -1:
            if infer_at is not None:
                raise RuntimeError(f"{fn}: only one dimension can be inferred")
            infer_at = i
        elif s < 0:
            raise RuntimeError(f"{fn}: invalid shape dimension {s} at index {i} of shape {list(sizes)}")
        else:
            known *= s
    if infer_at is None:
        if known != total:
            raise RuntimeError(f"{fn}: shape '{list(sizes)}' is invalid for input of size {total}")
        return sizes
    if known == 0:
        # With zero elements and another zero dim, any value fits the -1.
        if total == 0:
            raise RuntimeError(
                f"{fn}: cannot reshape tensor of 0 elements into shape {list(sizes)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        raise RuntimeError(f"{fn}: shape '{list(sizes)}' is invalid for input of size {total}")
    if total % known != 0:
        raise RuntimeError(f"{fn}: shape '{list(sizes)}' is invalid for input of size {total}")
    return sizes[:infer_at] + (total // known,) + sizes[infer_at + 1 :]


def view_strides(
    old_shape: Sequence[int], old_strides: Sequence[int], new_shape: Sequence[int], *, fn: str = "view"
) -> Strides | None:
    """Strides that let ``new_shape`` read the same memory in the same order, or None.

    None means the reshape needs a copy. ``new_shape`` must already be resolved
    (no -1, see :func:`infer_size`) and hold the same number of elements.

    >>> view_strides((2, 3), (3, 1), (3, 2))
    (2, 1)
    >>> view_strides((4, 6), (12, 2), (2, 2, 3, 2))
    (24, 12, 4, 2)
    >>> view_strides((2, 3), (1, 2), (6,)) is None
    True
    """
    old, old_st = _check_layout(old_shape, old_strides, fn)
    new = _check_shape(new_shape, fn, RuntimeError)
    total = math.prod(old)
    if math.prod(new) != total:
        raise RuntimeError(f"{fn}: shape '{list(new)}' is invalid for input of size {total}")
    if not old:
        return (1,) * len(new)
    if total == 0:
        # Nothing will ever be read, so any strides work; mirror PyTorch's choice.
        return old_st if old == new else contiguous_strides(new)

    # Idea: a view keeps the row-major order of elements. Group the old dims into
    # "chunks": maximal runs in which each dim steps exactly over the whole next dim
    # (stride == next size * next stride). A chunk behaves like one flat dim with
    # `count` elements spaced `base` apart, so it can be re-split any way we like.
    # The new dims must then split into consecutive groups whose sizes multiply to
    # each chunk's count; inside a group the strides are row-major multiples of
    # the chunk's base. Size-1 dims (old or new) never move, so they join any chunk.
    # We walk from the innermost dim outwards, which fixes where size-1 new dims go
    # (to the innermost chunk they border) and so matches PyTorch's strides exactly.
    chunks: list[list[int]] = []  # [count, base], innermost chunk first
    for size, stride in zip(reversed(old), reversed(old_st), strict=True):
        if chunks and (size == 1 or stride == chunks[-1][0] * chunks[-1][1]):
            chunks[-1][0] *= size
        else:
            chunks.append([size, stride])

    result = [0] * len(new)
    d = len(new) - 1
    for count, base in chunks:
        covered = 1
        while d >= 0 and (covered < count or new[d] == 1):
            result[d] = covered * base
            covered *= new[d]
            d -= 1
        if covered != count:
            return None
    return tuple(result) if d < 0 else None


# --------------------------------------------------------------------------- broadcasting


def broadcast_shapes(*shapes: Sequence[int], fn: str = "broadcast_shapes") -> Shape:
    """The shape all ``shapes`` broadcast to (NumPy/PyTorch rules).

    Shapes are aligned on the right; each dim must be equal or 1.

    >>> broadcast_shapes((2, 1, 3), (4, 1), ())
    (2, 4, 3)
    """
    result: Shape = ()
    for shape in shapes:
        sizes = _check_shape(shape, fn, RuntimeError)
        ndim = max(len(result), len(sizes))
        a = (1,) * (ndim - len(result)) + result
        b = (1,) * (ndim - len(sizes)) + sizes
        out = []
        for d, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(
                    f"{fn}: The size of tensor a ({x}) must match the size of tensor b ({y}) "
                    f"at non-singleton dimension {d}"
                )
            out.append(y if x == 1 else x)
        result = tuple(out)
    return result


def expand_strides(
    shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int], *, fn: str = "expand"
) -> Strides:
    """Strides that show a tensor of ``shape`` as ``new_shape`` without copying.

    Size-1 dims (and new leading dims) get stride 0, so every index along them
    reads the same element. ``-1`` keeps an existing size.

    >>> expand_strides((3, 1), (1, 1), (2, 3, 4))
    (0, 1, 0)
    >>> expand_strides((3,), (1,), (-1,))
    (1,)
    """
    old, old_st = _check_layout(shape, strides, fn)
    target = _as_int_tuple(new_shape, "size", fn)
    lead = len(target) - len(old)
    if lead < 0:
        raise RuntimeError(
            f"{fn}: the number of sizes provided ({len(target)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(old)})"
        )
    result = [0] * len(target)
    resolved = list(target)
    for i in reversed(range(len(target))):
        t = target[i]
        if i < lead:
            if t < 0:
                raise RuntimeError(
                    f"{fn}: The expanded size of the tensor ({t}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            # A new size-1 dim is never stepped along, so its stride is arbitrary; PyTorch uses
            # the span of the next dim (0 when expanding a 0-d tensor) and so do we.
            inner = resolved[i + 1] * result[i + 1] if i + 1 < len(target) else 0
            result[i] = inner if t == 1 else 0
            continue
        size, stride = old[i - lead], old_st[i - lead]
        if t == -1 or t == size:
            result[i] = stride
            resolved[i] = size
        elif size == 1 and t >= 0:
            result[i] = 0
        else:
            raise RuntimeError(
                f"{fn}: The expanded size of the tensor ({t}) must match the existing size ({size}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: {list(old)}"
            )
    return tuple(result)


# --------------------------------------------------------------------------- dim shuffles


def permute(
    shape: Sequence[int], strides: Sequence[int], dims: Sequence[int], *, fn: str = "permute"
) -> tuple[Shape, Strides]:
    """Reorder dims: output dim ``i`` is input dim ``dims[i]``.

    >>> permute((2, 3, 4), (12, 4, 1), (2, 0, 1))
    ((4, 2, 3), (1, 12, 4))
    """
    sizes, steps = _check_layout(shape, strides, fn)
    wanted = _as_int_tuple(dims, "dim", fn)
    if len(wanted) != len(sizes):
        raise RuntimeError(
            f"{fn}: number of dims don't match in permute (tensor has {len(sizes)} dims, got {len(wanted)})"
        )
    order = normalize_dims(wanted, len(sizes), fn=fn)
    return tuple(map(sizes.__getitem__, order)), tuple(map(steps.__getitem__, order))


def transpose(
    shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int, *, fn: str = "transpose"
) -> tuple[Shape, Strides]:
    """Swap two dims.

    >>> transpose((2, 3, 4), (12, 4, 1), 0, -1)
    ((4, 3, 2), (1, 4, 12))
    """
    sizes, steps = _check_layout(shape, strides, fn)
    a = normalize_dim(dim0, len(sizes), fn=fn)
    b = normalize_dim(dim1, len(sizes), fn=fn)
    if not sizes:
        return sizes, steps
    new_sizes, new_steps = list(sizes), list(steps)
    new_sizes[a], new_sizes[b] = new_sizes[b], new_sizes[a]
    new_steps[a], new_steps[b] = new_steps[b], new_steps[a]
    return tuple(new_sizes), tuple(new_steps)


def squeeze(
    shape: Sequence[int],
    strides: Sequence[int],
    dims: int | Sequence[int] | None = None,
    *,
    fn: str = "squeeze",
) -> tuple[Shape, Strides]:
    """Drop size-1 dims: all of them (``dims=None``) or those listed that have size 1.

    Listed dims whose size is not 1 are silently kept, as in PyTorch.

    >>> squeeze((1, 3, 1), (3, 1, 1))
    ((3,), (1,))
    >>> squeeze((1, 3, 1), (3, 1, 1), (1, 2))
    ((1, 3), (3, 1))
    """
    sizes, steps = _check_layout(shape, strides, fn)
    if dims is None:
        drop = {d for d, s in enumerate(sizes) if s == 1}
    else:
        drop = {d for d in normalize_dims(dims, len(sizes), fn=fn) if sizes and sizes[d] == 1}
    keep = [d for d in range(len(sizes)) if d not in drop]
    return tuple(sizes[d] for d in keep), tuple(steps[d] for d in keep)


def unsqueeze(
    shape: Sequence[int], strides: Sequence[int], dim: int, *, fn: str = "unsqueeze"
) -> tuple[Shape, Strides]:
    """Insert a size-1 dim at position ``dim`` (``-ndim-1 <= dim <= ndim``).

    Its stride is irrelevant (never stepped along); like PyTorch we use the span
    of the dim it is placed before, or 1 at the end.

    >>> unsqueeze((2, 3), (3, 1), 0)
    ((1, 2, 3), (6, 3, 1))
    >>> unsqueeze((2, 3), (3, 1), -1)
    ((2, 3, 1), (3, 1, 1))
    """
    sizes, steps = _check_layout(shape, strides, fn)
    d = normalize_dim(dim, len(sizes) + 1, fn=fn)
    stride = sizes[d] * steps[d] if d < len(sizes) else 1
    return sizes[:d] + (1,) + sizes[d:], steps[:d] + (stride,) + steps[d:]


# --------------------------------------------------------------------------- addressing


def index_to_offset(
    index: Sequence[int], strides: Sequence[int], offset: int = 0, *, fn: str = "index_to_offset"
) -> int:
    """Storage position of the element at ``index`` (no bounds check: there is no shape).

    >>> index_to_offset((1, 2), (3, 1), offset=10)
    15
    """
    idx = _as_int_tuple(index, "index", fn)
    steps = _as_int_tuple(strides, "stride", fn)
    if len(idx) != len(steps):
        raise ValueError(f"{fn}: index {list(idx)} has {len(idx)} entries but there are {len(steps)} strides")
    return _as_int(offset, "offset", fn) + sum(i * st for i, st in zip(idx, steps, strict=True))


def offset_to_index(flat: int, shape: Sequence[int], *, fn: str = "offset_to_index") -> tuple[int, ...]:
    """Row-major multi-index of the ``flat``-th element of a tensor of ``shape``.

    >>> offset_to_index(5, (2, 3))
    (1, 2)
    >>> offset_to_index(0, ())
    ()
    """
    sizes = _check_shape(shape, fn)
    n = _as_int(flat, "flat index", fn)
    total = math.prod(sizes)
    if not 0 <= n < total:
        raise IndexError(
            f"{fn}: flat index {n} is out of range for shape {list(sizes)} with {total} elements"
        )
    index = []
    for s in reversed(sizes):
        n, i = divmod(n, s)
        index.append(i)
    return tuple(reversed(index))


def storage_extent(
    shape: Sequence[int], strides: Sequence[int], offset: int, *, fn: str = "storage_extent"
) -> int:
    """How many storage elements a view needs: one past its farthest element (0 if empty).

    >>> storage_extent((2, 3), (3, 1), 4)
    10
    >>> storage_extent((2, 0), (3, 1), 4)
    0
    """
    sizes, steps = _check_layout(shape, strides, fn)
    if math.prod(sizes) == 0:
        return 0
    return _as_int(offset, "offset", fn) + sum((s - 1) * st for s, st in zip(sizes, steps, strict=True)) + 1


def has_internal_overlap(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Conservative test for two indices of a view sharing one storage element.

    Guarantee: False means no two distinct indices ever reach the same element.
    True means they do (e.g. a stride-0 dim from ``expand``) *or* the layout is too
    tangled for this cheap check (dims whose ranges interleave, such as shape
    ``(3, 2)`` with strides ``(2, 3)``, which happens not to overlap). Writers
    should refuse True, so the error is on the safe side.

    >>> has_internal_overlap((2, 3), (3, 1)), has_internal_overlap((2, 3), (0, 1))
    (False, True)
    """
    sizes, steps = _check_layout(shape, strides, "has_internal_overlap")
    if math.prod(sizes) == 0:
        return False
    # Sorted by stride, each dim must jump past everything the smaller dims can
    # reach; then every index lands on a distinct element (like digits of a number).
    reach = 0  # largest offset reachable using only the dims seen so far
    for stride, size in sorted((st, s) for s, st in zip(sizes, steps, strict=True) if s > 1):
        if stride <= reach:
            return True
        reach += (size - 1) * stride
    return False


# --------------------------------------------------------------------------- indexing


def _index_key(k: Any, fn: str) -> int:
    # Bools and arrays are masks / advanced indices in NumPy and PyTorch, not ints.
    if not isinstance(k, bool):
        try:
            return operator.index(k)
        except TypeError:
            pass
    raise TypeError(
        f"{fn}: unsupported index type {type(k).__name__}: advanced indexing "
        "(integer arrays, masks) is not supported by basic_index"
    )


def _slice_bound(b: Any, fn: str) -> int | None:
    if b is None:
        return None
    try:
        return operator.index(b)
    except TypeError:
        raise TypeError(f"{fn}: slice indices must be integers or None, got {type(b).__name__}") from None


def simple_index(shape: Shape, strides: Strides, offset: int, key: Any) -> tuple[Shape, Strides, int] | None:
    """:func:`basic_index` for the common keys only, fast: an int, a slice of ints/None with a
    positive step, or a tuple of those, on a tensor's own (valid) shape and strides. Returns None
    for anything else, including every key that is an error, so that the caller can take
    :func:`basic_index`, which raises the precise message.

    >>> simple_index((4, 5), (5, 1), 0, (1, slice(None, None, 2)))
    ((3,), (2,), 5)
    >>> simple_index((4, 5), (5, 1), 0, (None, 1)) is None
    True
    """
    keys = key if type(key) is tuple else (key,)
    if len(keys) > len(shape):
        return None
    out_sizes = []
    out_steps = []
    d = 0
    for k in keys:
        kind = type(k)
        size = shape[d]
        step_d = strides[d]
        if kind is int:
            if k < 0:
                k += size
            if not 0 <= k < size:
                return None
            offset += k * step_d
        elif kind is slice:
            step = k.step
            if step is None:
                step = 1
            elif type(step) is not int or step <= 0:
                return None
            start, stop = k.start, k.stop
            if (start is not None and type(start) is not int) or (stop is not None and type(stop) is not int):
                return None
            start, stop, step = k.indices(size)
            out_sizes.append(len(range(start, stop, step)))
            out_steps.append(step_d * step)
            offset += start * step_d
        else:
            return None
        d += 1
    return (*out_sizes, *shape[d:]), (*out_steps, *strides[d:]), offset


def basic_index(
    shape: Sequence[int], strides: Sequence[int], offset: int, key: Any, *, fn: str = "__getitem__"
) -> tuple[Shape, Strides, int]:
    """The view selected by a basic index ``key`` (ints, slices, None, one Ellipsis).

    Returns ``(shape, strides, offset)``. Ints drop their dim, slices keep it
    (positive steps only), None inserts a size-1 dim, ``...`` stands for as many
    ``:`` as needed.

    >>> basic_index((4, 5), (5, 1), 0, (1, slice(None, None, 2)))
    ((3,), (2,), 5)
    >>> basic_index((4, 5), (5, 1), 0, (None, ..., -1))
    ((1, 4), (20, 5), 4)
    """
    sizes, steps = _check_layout(shape, strides, fn)
    pos = _as_int(offset, "offset", fn)
    items = []  # the key with int-likes turned into ints and slices into (start, stop, step)
    consumed = 0  # how many input dims the key names explicitly
    for k in key if isinstance(key, tuple) else (key,):
        if k is None or k is Ellipsis:
            if k is Ellipsis and Ellipsis in items:
                raise IndexError(f"{fn}: an index can only have a single ellipsis ('...')")
            items.append(k)
            continue
        if isinstance(k, slice):
            start, stop, step = (_slice_bound(b, fn) for b in (k.start, k.stop, k.step))
            step = 1 if step is None else step
            if step <= 0:
                raise ValueError(f"{fn}: step must be greater than zero")
            items.append((start, stop, step))
        else:
            items.append(_index_key(k, fn))
        consumed += 1
    if consumed > len(sizes):
        raise IndexError(f"{fn}: too many indices for tensor of dimension {len(sizes)}")

    out_sizes: list[int] = []
    out_steps: list[int] = []
    d = 0  # next input dim to be indexed
    for k in items:
        if k is None:
            # Same stride as unsqueeze before the not-yet-indexed dim d (PyTorch does exactly that).
            out_sizes.append(1)
            out_steps.append(sizes[d] * steps[d] if d < len(sizes) else 1)
        elif k is Ellipsis:
            skip = len(sizes) - consumed
            out_sizes.extend(sizes[d : d + skip])
            out_steps.extend(steps[d : d + skip])
            d += skip
        elif isinstance(k, tuple):
            # slice.indices clamps start/stop into [0, size] the way Python lists do.
            start, stop, step = slice(*k).indices(sizes[d])
            out_sizes.append(len(range(start, stop, step)))
            out_steps.append(steps[d] * step)
            pos += start * steps[d]
            d += 1
        else:
            if not -sizes[d] <= k < sizes[d]:
                raise IndexError(f"{fn}: index {k} is out of bounds for dimension {d} with size {sizes[d]}")
            pos += (k + sizes[d] if k < 0 else k) * steps[d]
            d += 1
    # Dims not mentioned by the key are taken whole.
    out_sizes.extend(sizes[d:])
    out_steps.extend(steps[d:])
    return tuple(out_sizes), tuple(out_steps), pos


# --------------------------------------------------------------------------- split / chunk / narrow


def split_sizes(
    dim_size: int, split_size_or_sections: int | Sequence[int], *, fn: str = "split"
) -> list[int]:
    """Piece sizes for ``Tensor.split``: fixed-size pieces (last may be smaller) or explicit sizes.

    >>> split_sizes(5, 2)
    [2, 2, 1]
    >>> split_sizes(6, [1, 2, 3])
    [1, 2, 3]
    >>> split_sizes(0, 3)
    [0]
    """
    n = _as_int(dim_size, "dim_size", fn)
    if n < 0:
        raise ValueError(f"{fn}: dim_size must be non-negative, got {n}")
    if isinstance(split_size_or_sections, (list, tuple)):
        sections = [_as_int(s, "split size", fn) for s in split_size_or_sections]
        if any(s < 0 for s in sections):
            raise RuntimeError(
                f"{fn}: split_with_sizes expects split_sizes have only non-negative entries, "
                f"but got split_sizes={sections}"
            )
        if sum(sections) != n:
            raise RuntimeError(
                f"{fn}: split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension 0), but got split_sizes={sections}"
            )
        return sections
    size = _as_int(split_size_or_sections, "split_size", fn)
    if size < 0:
        raise RuntimeError(f"{fn}: split expects split_size be non-negative, but got split_size={size}")
    if size == 0:
        if n != 0:
            raise RuntimeError(
                f"{fn}: split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        return [0]
    pieces = max(-(-n // size), 1)
    return [size] * (pieces - 1) + [n - size * (pieces - 1)]


def chunk_sizes(dim_size: int, chunks: int, *, fn: str = "chunk") -> list[int]:
    """Piece sizes for ``Tensor.chunk``: pieces of ``ceil(dim_size / chunks)``.

    Like PyTorch this can give fewer than ``chunks`` pieces (6 into 4 gives 3
    pieces of 2), except that an empty dim gives exactly ``chunks`` empty pieces.

    >>> chunk_sizes(5, 3)
    [2, 2, 1]
    >>> chunk_sizes(6, 4)
    [2, 2, 2]
    >>> chunk_sizes(0, 3)
    [0, 0, 0]
    """
    n = _as_int(dim_size, "dim_size", fn)
    c = _as_int(chunks, "chunks", fn)
    if c <= 0:
        raise RuntimeError(f"{fn}: chunk expects `chunks` to be greater than 0, got: {c}")
    if n < 0:
        raise ValueError(f"{fn}: dim_size must be non-negative, got {n}")
    if n == 0:
        return [0] * c
    return split_sizes(n, -(-n // c), fn=fn)


def narrow_check(dim_size: int, start: int, length: int, *, fn: str = "narrow") -> int:
    """Validate ``narrow(dim, start, length)`` and return ``start`` made non-negative.

    ``start`` may be in ``[-dim_size, dim_size]``; ``start + length`` must fit.

    >>> narrow_check(5, -2, 2)
    3
    >>> narrow_check(5, 5, 0)
    5
    """
    n = _as_int(dim_size, "dim_size", fn)
    s = _as_int(start, "start", fn)
    length = _as_int(length, "length", fn)
    if length < 0:
        raise RuntimeError(f"{fn}: length must be non-negative.")
    if not -n <= s <= n:
        raise IndexError(f"{fn}: start out of range (expected to be in range of [{-n}, {n}], but got {s})")
    if s < 0:
        s += n
    if s + length > n:
        raise RuntimeError(f"{fn}: start ({s}) + length ({length}) exceeds dimension size ({n}).")
    return s


def as_strided_check(
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int,
    storage_numel: int,
    *,
    fn: str = "as_strided",
) -> None:
    """Raise unless ``(size, stride, storage_offset)`` is a valid view of a storage of ``storage_numel``.

    Empty views need no storage at all, whatever their offset.

    >>> as_strided_check((2, 2), (1, 2), 1, 5)
    >>> as_strided_check((2, 2), (1, 3), 1, 5)
    Traceback (most recent call last):
    ...
    RuntimeError: as_strided: setStorage: sizes [2, 2], strides [1, 3], storage offset 1 requiring a \
storage size of 6 elements are out of bounds for storage of size 5 elements
    """
    sizes = _as_int_tuple(size, "size", fn)
    steps = _as_int_tuple(stride, "stride", fn)
    off = _as_int(storage_offset, "storage_offset", fn)
    have = _as_int(storage_numel, "storage_numel", fn)
    if len(sizes) != len(steps):
        raise RuntimeError(f"{fn}: mismatch in length of strides and shape ({len(steps)} vs {len(sizes)})")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{fn}: Negative sizes are not supported, got sizes: {list(sizes)}")
    if any(st < 0 for st in steps):
        raise RuntimeError(
            f"{fn}: Negative strides are not supported at the moment, got strides: {list(steps)}"
        )
    if off < 0:
        raise RuntimeError(f"{fn}: invalid storage offset {off}")
    need = storage_extent(sizes, steps, off)
    if need > have:
        raise RuntimeError(
            f"{fn}: setStorage: sizes {list(sizes)}, strides {list(steps)}, storage offset {off} requiring a "
            f"storage size of {need} elements are out of bounds for storage of size {have} elements"
        )

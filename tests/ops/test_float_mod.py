"""fmod, remainder and floor_divide of floats, bit for bit.

The float rows compute C's fmod (always exact) with vectorized arithmetic for the common case and
the C library's fmod for the rest (elementwise_rows.h, mod_fast_*: huge quotients, inf, NaN, zero
divisors). Both give the exact value, so the results must be the very bits the C library gives:
each result here is compared bit for bit (the sign of a zero too; a NaN must be a NaN) with

- NumPy: np.fmod, np.remainder and np.floor_divide compute the same definitions (npy_divmod),
  except that np.remainder gives a zero result the divisor's sign where t_tensor (as PyTorch)
  keeps fmod's, the dividend's: remainder(-4.0, 2.0) is -0.0 here and in PyTorch, +0.0 in NumPy;
- a reference written here with math.fmod and the kernel's steps in the dtype (``reference``),
  which covers that zero and float16.

The inputs aim at the fast path's edges: exponents over the whole range, quotients just under,
at and just over integers (a = k*b rounded and its neighbours, where the rounded quotient is one
too large), near the powers of two where the fast path hands over to the C library, exact
multiples, subnormals, huge and tiny ratios, the special values against everything, and random
bit patterns. tests/ops/test_elementwise_isa.py checks that the three builds give the same bits.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import helper_test_op

import t_tensor as tt

OPS = ["fmod", "remainder", "floor_divide"]
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def mod_inputs(dtype: type, n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (a, b) of float32 or float64 over the cases in the module docstring."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    finfo = np.finfo(dt)
    mbits = finfo.nmant
    parts_a, parts_b = [], []

    def spread(k: int, lo: int = finfo.minexp - mbits, hi: int = finfo.maxexp - 1) -> np.ndarray:
        """Random significands times 2^e, e uniform in [lo, hi), both signs."""
        value = np.ldexp(rng.random(k) + 1.0, rng.integers(lo, hi, k))
        return (value * rng.choice([-1.0, 1.0], k)).astype(dt)

    def add(a, b) -> None:
        parts_a.append(np.asarray(a, dt))
        parts_b.append(np.asarray(b, dt))

    def step(x: np.ndarray, k: int) -> np.ndarray:
        """x moved k representable values away from zero (toward it for k < 0)."""
        for _ in range(abs(k)):
            x = np.nextafter(x, (np.inf if k > 0 else 0.0) * np.sign(x)).astype(dt)
        return x

    with np.errstate(all="ignore"):
        add(spread(n), spread(n))  # independent exponents over the whole range
        b = spread(n, -60, 60)
        quotient = rng.uniform(-(2.0**30), 2.0**30, n) * 2.0 ** -rng.integers(0, 30, n)
        add(b.astype(np.float64) * quotient, b)  # moderate quotients of every size
        b = spread(n, -30, 30)
        k = rng.integers(1, 2 ** rng.integers(1, 60, n), dtype=np.int64).astype(dt)
        multiple = (k * b).astype(dt)  # k*b rounded: quotients at, under and over integers
        for d in (-2, -1, 0, 1, 2):
            a = step(multiple, d)
            add(a, b)
            add(-a, b)
            add(a, -b)
        b = spread(n, -20, 20)
        power = 2.0 ** rng.integers(0, 64, n)
        for f in (1 - 2.0**-40, 1.0, 1 + 2.0**-40):  # quotients near 2^k (the fast path's limits)
            a = (b.astype(np.float64) * power * f).astype(dt)
            add(a, b)
            add(step(a, 1), b)
            add(step(a, -1), b)
        b = (rng.integers(1, 2**10, n) * 2.0 ** rng.integers(-40, 40, n)).astype(dt)
        add(rng.integers(-(2**12), 2**12, n) * b.astype(np.float64), b)  # exact multiples
        sub = rng.integers(1, 2**mbits, n).astype(UINT[dt.itemsize]).view(dt) * rng.choice([-1, 1], n).astype(dt)
        add(sub, spread(n))  # subnormals
        add(spread(n), sub)
        add(sub, np.roll(sub, 1))
        add(spread(n, finfo.maxexp - 10, finfo.maxexp - 1), spread(n, finfo.minexp - mbits, finfo.minexp + 10))
        add(spread(n, finfo.minexp - mbits, finfo.minexp + 10), spread(n, finfo.maxexp - 10, finfo.maxexp - 1))
        bits = rng.integers(0, 2 ** (8 * dt.itemsize), (2, n), dtype=np.uint64).astype(UINT[dt.itemsize]).view(dt)
        add(bits[0], bits[1])  # random bit patterns, NaN payloads among them
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, finfo.max, -finfo.max, finfo.tiny,
                            finfo.smallest_subnormal, -finfo.smallest_subnormal, 1.0, -1.0, 0.5, 3.0, -7.0], dt)
        sa, sb = np.meshgrid(special, special)
        add(sa.ravel(), sb.ravel())
        sa, sb = np.meshgrid(special, spread(100))
        add(sa.ravel(), sb.ravel())
        add(sb.ravel(), sa.ravel())
    return np.concatenate(parts_a), np.concatenate(parts_b)


def _fmod(x: float, y: float) -> float:
    """C's fmod; NaN where math.fmod raises (x infinite or y zero) or an operand is NaN."""
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    return math.fmod(x, y)


def reference(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The kernel's definition: math.fmod (exact, so the same in double as in the dtype), then
    PyTorch's (Python's) rounding toward negative infinity, each step rounded to the dtype as the
    C rows do (float16 in float32, rounded at the end)."""
    out_dtype = a.dtype
    if a.dtype == np.float16:
        a, b = a.astype(np.float32), b.astype(np.float32)
    t = a.dtype.type
    with np.errstate(all="ignore"):
        mod = np.array([_fmod(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)], np.float64).astype(a.dtype)
        flip = (mod != 0) & ((b < 0) != (mod < 0))
        if op == "fmod":
            result = mod
        elif op == "remainder":
            result = np.where(flip, mod + b, mod)
        else:
            div = (a - mod) / b
            div = np.where(flip, div - t(1), div)
            floored = np.floor(div)
            result = np.where(div - floored > t(0.5), floored + t(1), floored)
            result = np.where(div == 0, np.copysign(t(0), a / b), result)
            result = np.where(b == 0, a / b, result)
        return result.astype(a.dtype).astype(out_dtype)


def assert_same_bits(got: np.ndarray, want: np.ndarray, a: np.ndarray, b: np.ndarray, what: str,
                     ignore: np.ndarray | None = None) -> None:
    """Equal bits, or both NaN; ``ignore`` masks positions left out."""
    assert got.dtype == want.dtype and got.shape == want.shape
    uint = UINT[got.dtype.itemsize]
    bad = (got.view(uint) != want.view(uint)) & ~(np.isnan(got) & np.isnan(want))
    if ignore is not None:
        bad &= ~ignore
    if bad.any():
        i = np.flatnonzero(bad)[:5]
        pairs = ", ".join(f"({a.flat[j]!r}, {b.flat[j]!r}): {got.flat[j]!r} vs {want.flat[j]!r}" for j in i)
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} differ, e.g. {pairs}")


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["float32", "float64"])
def pairs(request):
    dtype = request.param
    a, b = mod_inputs(dtype)
    return a, b, {op: reference(op, a, b) for op in OPS}


@pytest.mark.parametrize("op", OPS)
def test_matches_numpy_bit_for_bit(pairs, op):
    a, b, _ = pairs
    with np.errstate(all="ignore"):
        got = helper_test_op([a, b], getattr(tt, op), getattr(np, op)).numpy()  # shape, dtype, values
        want = getattr(np, op)(a, b)
    # np.remainder's zero takes the divisor's sign; t_tensor's (and PyTorch's) the dividend's
    zero = (want == 0) if op == "remainder" else None
    assert_same_bits(got, want, a, b, f"{op} vs NumPy", ignore=zero)


@pytest.mark.parametrize("op", OPS)
def test_matches_the_definition_bit_for_bit(pairs, op):
    a, b, want = pairs
    assert_same_bits(getattr(tt, op)(tt.tensor(a), tt.tensor(b)).numpy(), want[op], a, b, op)


def test_remainder_zero_keeps_the_dividends_sign_as_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([-4.0, 4.0, -4.0, 4.0, -0.0, 0.0, -6.0, 1e30], np.float64)
    b = np.array([2.0, -2.0, -2.0, 2.0, 3.0, -3.0, 1.5, -1e-30], np.float64)
    for dtype in (np.float32, np.float64):
        x, y = a.astype(dtype), b.astype(dtype)
        got = tt.remainder(tt.tensor(x), tt.tensor(y)).numpy()
        assert_same_bits(got, torch.remainder(torch.from_numpy(x), torch.from_numpy(y)).numpy(), x, y, "vs torch")
        zero = got == 0
        assert zero[:6].all() and np.array_equal(np.signbit(got[zero]), np.signbit(x[zero]))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layouts_use_the_same_rows(op, dtype):
    """Strided operands, a broadcast scalar on either side, broadcasting rows against columns,
    in place, and lengths that leave partial chunks and vector tails: the same bits."""
    a, b = mod_inputs(dtype, n=300, seed=1)
    fn = getattr(tt, op)
    ta, tb = tt.tensor(a), tt.tensor(b)
    m = len(a) // 3
    assert_same_bits(fn(ta[::3][:m], tb[1::3][:m]).numpy(), reference(op, a[::3][:m], b[1::3][:m]),
                     a[::3][:m], b[1::3][:m], "strided")
    assert_same_bits(fn(ta.flip(0), tb).numpy(), reference(op, a[::-1].copy(), b), a[::-1], b, "reversed")
    for s in (3.0, -0.7, 1e-30, 2.0**-1074, 0.0, -0.0, math.inf, math.nan):
        sv = np.full_like(a, s)
        assert_same_bits(fn(ta, s).numpy(), reference(op, a, sv), a, sv, f"tensor, {s}")
        assert_same_bits(fn(s, ta).numpy(), reference(op, sv, a), sv, a, f"{s}, tensor")
    rows, cols = a[:257].reshape(257, 1), b[:130].reshape(1, 130)
    ra, rb = np.broadcast_arrays(rows, cols)
    got = fn(tt.tensor(rows), tt.tensor(cols)).numpy()
    assert_same_bits(got.ravel(), reference(op, ra.ravel().copy(), rb.ravel().copy()), ra.ravel(), rb.ravel(),
                     "broadcast")
    inplace = tt.tensor(a)
    getattr(inplace, op + "_")(tb)
    assert_same_bits(inplace.numpy(), reference(op, a, b), a, b, "in place")
    for n in (1, 7, 255, 256, 257, 513):
        assert_same_bits(fn(ta[:n], tb[:n]).numpy(), reference(op, a[:n], b[:n]), a[:n], b[:n], f"length {n}")


@pytest.mark.parametrize("op", OPS)
def test_float16_computes_in_float32(op):
    a, b = mod_inputs(np.float32, n=300, seed=2)
    with np.errstate(all="ignore"):
        a, b = a.astype(np.float16), b.astype(np.float16)
    got = getattr(tt, op)(tt.tensor(a), tt.tensor(b)).numpy()
    assert_same_bits(got, reference(op, a, b), a, b, f"float16 {op}")

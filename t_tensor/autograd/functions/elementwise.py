"""Derivatives of the elementwise ops, one row per primitive: the forward is the op's C kernel
(named by the row), the backward the row's local derivatives, side by side.

Each row gives the values the backward needs ("x"/"y": the inputs, "z": the output), then one
function per input: ``(grad, x, y, z) -> gradient of that input``. The gradients are returned at
the broadcast output shape; the engine sums them down to each input's shape. A class per row
(``Mul``, ``Exp``, ...) is generated so that nodes print as ``MulBackward`` and so on.
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor import elementwise as E
from t_tensor.autograd.function import Function
from t_tensor.autograd.functions.views import apply_inplace

__all__ = ["binary", "ternary", "unary"]

_math_log = math.log
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _where(condition: Any, value: Any, other: Any = 0.0) -> Any:
    return E.where(condition, value, other)


def _pow_base(g: Any, x: Any, y: Any, z: Any) -> Any:
    # y * x^(y-1), taken as 0 where y == 0 (PyTorch: no 0 * inf at x == 0)
    if not hasattr(y, "_ag"):
        return g * 0.0 if y == 0 else g * y * E.pow(x, y - 1)
    return _where(E.eq(y, 0), 0.0, g * y * E.pow(x, y - 1))


def _pow_exponent(g: Any, x: Any, y: Any, z: Any) -> Any:
    # z * log(x), taken as 0 where x == 0 and y >= 0 (the limit PyTorch uses)
    if not hasattr(x, "_ag"):
        return g * 0.0 if x == 0 else g * z * _math_log(x)
    return _where(E.logical_and(E.eq(x, 0), E.ge(y, 0)), 0.0, g * z * E.log(x))


def _max_share(g: Any, x: Any, y: Any) -> Any:
    """maximum's gradient for x: all of it where x wins, half where they tie."""
    return _where(E.gt(x, y), g, _where(E.eq(x, y), g * 0.5))


def _gelu(g: Any, x: Any) -> Any:
    cdf = 0.5 * (1.0 + E.erf(x * _INV_SQRT_2))
    pdf = E.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _gelu_tanh(g: Any, x: Any) -> Any:
    inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    t = E.tanh(inner)
    return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x))


def _silu(g: Any, x: Any) -> Any:
    s = E.sigmoid(x)
    return g * s * (1.0 + x * (1.0 - s))


def _copysign(g: Any, x: Any, y: Any, z: Any) -> Any:
    return _where(E.eq(x, 0), 0.0, g * (z / x))


# name: (needs, d/dx, d/dy)
BINARY_DERIVATIVES = {
    "add": ("", lambda g, x, y, z: g, lambda g, x, y, z: g),
    "sub": ("", lambda g, x, y, z: g, lambda g, x, y, z: -g),
    "mul": ("xy", lambda g, x, y, z: g * y, lambda g, x, y, z: g * x),
    "div": ("yz", lambda g, x, y, z: g / y, lambda g, x, y, z: -g * z / y),
    "pow": ("xyz", _pow_base, _pow_exponent),
    "maximum": ("xy", lambda g, x, y, z: _max_share(g, x, y), lambda g, x, y, z: _max_share(g, y, x)),
    "minimum": ("xy", lambda g, x, y, z: _max_share(g, y, x), lambda g, x, y, z: _max_share(g, x, y)),
    "clamp_min": ("xy", lambda g, x, y, z: _where(E.ge(x, y), g), lambda g, x, y, z: _where(E.lt(x, y), g)),
    "clamp_max": ("xy", lambda g, x, y, z: _where(E.le(x, y), g), lambda g, x, y, z: _where(E.gt(x, y), g)),
    "atan2": ("xy", lambda g, x, y, z: g * y / (x * x + y * y), lambda g, x, y, z: -g * x / (x * x + y * y)),
    "hypot": ("xyz", lambda g, x, y, z: g * x / z, lambda g, x, y, z: g * y / z),
    "copysign": ("xz", _copysign, lambda g, x, y, z: g * 0.0),
    "logaddexp": ("xy", lambda g, x, y, z: g * E.sigmoid(x - y), lambda g, x, y, z: g * E.sigmoid(y - x)),
    "logaddexp2": ("xy", lambda g, x, y, z: g * E.sigmoid((x - y) * _LN2),
                   lambda g, x, y, z: g * E.sigmoid((y - x) * _LN2)),
    "fmod": ("xy", lambda g, x, y, z: g, lambda g, x, y, z: -g * E.trunc(x / y)),
    "remainder": ("xy", lambda g, x, y, z: g, lambda g, x, y, z: -g * E.floor(x / y)),
}

# name: (needs, d/dx); "p" gives the op's parameters as the last argument
UNARY_DERIVATIVES = {
    "neg": ("", lambda g, x, z, p: -g),
    "abs": ("x", lambda g, x, z, p: g * E.sign(x)),
    "square": ("x", lambda g, x, z, p: g * 2.0 * x),
    "relu": ("z", lambda g, x, z, p: E._relu_grad(g, z)),
    "exp": ("z", lambda g, x, z, p: g * z),
    "exp2": ("z", lambda g, x, z, p: g * z * _LN2),
    "expm1": ("z", lambda g, x, z, p: g * (z + 1.0)),
    "log": ("x", lambda g, x, z, p: g / x),
    "log1p": ("x", lambda g, x, z, p: g / (x + 1.0)),
    "log2": ("x", lambda g, x, z, p: g / (x * _LN2)),
    "log10": ("x", lambda g, x, z, p: g / (x * _LN10)),
    "sqrt": ("z", lambda g, x, z, p: g / (2.0 * z)),
    "rsqrt": ("z", lambda g, x, z, p: -0.5 * g * z * z * z),
    "reciprocal": ("z", lambda g, x, z, p: -g * z * z),
    "sin": ("x", lambda g, x, z, p: g * E.cos(x)),
    "cos": ("x", lambda g, x, z, p: -g * E.sin(x)),
    "tan": ("z", lambda g, x, z, p: g * (1.0 + z * z)),
    "asin": ("x", lambda g, x, z, p: g * E.rsqrt(1.0 - x * x)),
    "acos": ("x", lambda g, x, z, p: -g * E.rsqrt(1.0 - x * x)),
    "atan": ("x", lambda g, x, z, p: g / (1.0 + x * x)),
    "sinh": ("x", lambda g, x, z, p: g * E.cosh(x)),
    "cosh": ("x", lambda g, x, z, p: g * E.sinh(x)),
    "tanh": ("z", lambda g, x, z, p: g * (1.0 - z * z)),
    "asinh": ("x", lambda g, x, z, p: g * E.rsqrt(x * x + 1.0)),
    "acosh": ("x", lambda g, x, z, p: g * E.rsqrt(x * x - 1.0)),
    "atanh": ("x", lambda g, x, z, p: g / (1.0 - x * x)),
    "sigmoid": ("z", lambda g, x, z, p: g * z * (1.0 - z)),
    "erf": ("x", lambda g, x, z, p: g * _TWO_OVER_SQRT_PI * E.exp(-x * x)),
    "gelu": ("x", lambda g, x, z, p: _gelu(g, x)),
    "gelu_tanh": ("x", lambda g, x, z, p: _gelu_tanh(g, x)),
    "silu": ("x", lambda g, x, z, p: _silu(g, x)),
    "softplus": ("x", lambda g, x, z, p: _where(E.gt(x * p[0], p[1]), g, g * E.sigmoid(x * p[0]))),
    "leaky_relu": ("x", lambda g, x, z, p: _where(E.gt(x, 0), g, g * p[0])),
    "elu": ("xz", lambda g, x, z, p: _where(E.gt(x, 0), g, g * (z + p[0]))),
    "logit": ("x", lambda g, x, z, p: _logit(g, x, p)),
    # piecewise constant: the gradient is zero (the output still requires grad, as in PyTorch)
    "sign": ("", lambda g, x, z, p: g * 0.0),
    "floor": ("", lambda g, x, z, p: g * 0.0),
    "ceil": ("", lambda g, x, z, p: g * 0.0),
    "round": ("", lambda g, x, z, p: g * 0.0),
    "trunc": ("", lambda g, x, z, p: g * 0.0),
}


def _logit(g: Any, x: Any, params: tuple) -> Any:
    d = g / (x * (1.0 - x))
    if params[1] == 0.0:  # no eps
        return d
    eps = params[0]
    return _where(E.logical_or(E.lt(x, eps), E.gt(x, 1.0 - eps)), 0.0, d)


def _class_name(op: str) -> str:
    return "".join(part.capitalize() for part in op.split("_"))


def _make_binary(op: str, needs: str, d_x: Any, d_y: Any) -> type[Function]:
    def forward(ctx: Any, x: Any, y: Any) -> Any:
        z = E.binary(op, x, y)
        ctx.x = x if "x" in needs else None
        ctx.y = y if "y" in needs else None
        tensors = [v for v in (ctx.x, ctx.y) if hasattr(v, "_ag")] + ([z] if "z" in needs else [])
        ctx.save_for_backward(*tensors)
        return z

    def backward(ctx: Any, g: Any) -> tuple:
        saved = list(ctx.saved_tensors)
        x = saved.pop(0) if hasattr(ctx.x, "_ag") else ctx.x
        y = saved.pop(0) if hasattr(ctx.y, "_ag") else ctx.y
        z = saved.pop(0) if "z" in needs else None
        return (d_x(g, x, y, z) if ctx.needs_input_grad[0] else None,
                d_y(g, x, y, z) if ctx.needs_input_grad[1] else None)

    return type(_class_name(op), (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def _make_unary(op: str, needs: str, d_x: Any) -> type[Function]:
    def forward(ctx: Any, x: Any, params: tuple, name: str) -> Any:
        z = E.unary(op, x, None, params, name)
        ctx.params = params
        ctx.save_for_backward(x if "x" in needs else None, z if "z" in needs else None)
        return z

    def backward(ctx: Any, g: Any) -> tuple:
        x, z = ctx.saved_tensors
        return d_x(g, x, z, ctx.params), None, None

    return type(_class_name(op), (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


BINARY = {op: _make_binary(op, *row) for op, row in BINARY_DERIVATIVES.items()}
UNARY = {op: _make_unary(op, *row) for op, row in UNARY_DERIVATIVES.items()}


def binary(fn: str, a: Any, b: Any, out: Any) -> Any:
    """``elementwise.binary`` when an operand requires grad (grad mode on)."""
    function = BINARY.get(fn)
    if out is not None:
        if out is not a:
            raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        needs_old = function is None or "x" in BINARY_DERIVATIVES[fn][0]
        return apply_inplace(a, lambda old: binary(fn, old, old if b is a else b, None), f"{fn}_", needs_old)
    if function is None:  # comparisons, bitwise and integer ops: no gradient
        return _no_grad(E.binary, fn, a, b)
    return function.apply(a, b)


def unary(fn: str, x: Any, out: Any, params: tuple, name: str) -> Any:
    """``elementwise.unary`` when ``x`` requires grad (grad mode on)."""
    function = UNARY.get(fn)
    if out is not None:
        if out is not x:
            raise RuntimeError(f"{name or fn}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        needs_old = function is None or "x" in UNARY_DERIVATIVES[fn][0]
        return apply_inplace(x, lambda old: unary(fn, old, None, params, name), f"{name or fn}_", needs_old)
    if function is None:
        return _no_grad(E.unary, fn, x, None, params, name)
    return function.apply(x, params, name)


def _no_grad(function: Any, *args: Any) -> Any:
    from t_tensor.autograd.grad_mode import no_grad

    with no_grad():
        return function(*args)


class Where(Function):
    @staticmethod
    def forward(ctx: Any, condition: Any, x: Any, y: Any) -> Any:
        ctx.save_for_backward(condition)
        return E.where(condition, x, y)

    @staticmethod
    def backward(ctx: Any, g: Any) -> tuple:
        (condition,) = ctx.saved_tensors
        zero = g * 0.0
        return (None,
                E.where(condition, g, zero) if ctx.needs_input_grad[1] else None,
                E.where(condition, zero, g) if ctx.needs_input_grad[2] else None)


class Clamp(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, low: Any, high: Any) -> Any:
        ctx.save_for_backward(*(v if hasattr(v, "_ag") else None for v in (x, low, high)))
        ctx.numbers = (low, high)
        return E.clamp(x, low, high)

    @staticmethod
    def backward(ctx: Any, g: Any) -> tuple:
        x, low, high = ctx.saved_tensors
        low = ctx.numbers[0] if low is None else low
        high = ctx.numbers[1] if high is None else high
        inside = E.logical_and(E.ge(x, low), E.le(x, high))
        return (_where(inside, g) if ctx.needs_input_grad[0] else None,
                _where(E.lt(x, low), g) if ctx.needs_input_grad[1] else None,
                _where(E.gt(x, high), g) if ctx.needs_input_grad[2] else None)


class Lerp(Function):
    @staticmethod
    def forward(ctx: Any, start: Any, end: Any, weight: Any) -> Any:
        ctx.save_for_backward(start, end, weight if hasattr(weight, "_ag") else None)
        ctx.weight = weight
        return E.lerp(start, end, weight)

    @staticmethod
    def backward(ctx: Any, g: Any) -> tuple:
        start, end, weight = ctx.saved_tensors
        weight = ctx.weight if weight is None else weight
        return (g * (1.0 - weight) if ctx.needs_input_grad[0] else None,
                g * weight if ctx.needs_input_grad[1] else None,
                g * (end - start) if ctx.needs_input_grad[2] else None)


TERNARY = {"where": Where, "clamp": Clamp, "lerp": Lerp}


def ternary(fn: str, a: Any, b: Any, c: Any, out: Any) -> Any:
    """where, clamp (both bounds) and lerp when an operand requires grad."""
    if out is not None:
        target = b if fn == "where" else a
        if out is not target:
            raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        if fn == "where":
            return apply_inplace(b, lambda old: Where.apply(a, old, c), f"{fn}_")
        return apply_inplace(a, lambda old: TERNARY[fn].apply(old, b, c), f"{fn}_")
    return TERNARY[fn].apply(a, b, c)

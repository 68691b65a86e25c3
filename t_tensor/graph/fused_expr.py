"""Fused elementwise kernels: an expression such as ``relu(add(mul(@0,@1),@2))`` run in one pass.

A chain of elementwise ops run one by one writes every intermediate tensor to memory and reads it
back. The fusion pass replaces such a chain by one node whose computation is written as an
expression over the chain's inputs; this module turns that text into a kernel, in the three steps
of any small compiler:

1. :func:`tokenize` cuts the text into tokens (names, ``@i`` inputs, numbers, punctuation), each
   with its position in the text;
2. :func:`parse` builds the tree: an :class:`ExprNode` per op (``op`` and ``children``), an input or
   a literal at the leaves; unknown ops and wrong numbers of arguments are refused here;
3. :func:`to_postfix` walks the tree children first and gives the postfix program of a stack
   machine: ``load @i``, ``const c``, then each op after its operands.

:class:`FusedKernel` does the three steps once and encodes the program for the C kernel
(``tt_fused_eval``, csrc/src/kernels/fused.c), which runs it block by block: for each block of
512 elements, every instruction is one loop over block-sized buffers that stay in cache, so only
the inputs are read from memory and only the result is written.

>>> import t_tensor as tt
>>> from t_tensor.graph import FusedKernel
>>> k = FusedKernel("relu(add(mul(@0,@1),@2))")
>>> k.program
[load @0, load @1, mul, load @2, add, relu]
>>> k(tt.tensor([1.0, -2.0]), tt.tensor([3.0, 3.0]), tt.tensor(0.5))
tensor([3.5000, 0.0000])

Errors name the position in the text:

>>> FusedKernel("add(@0)")
Traceback (most recent call last):
...
t_tensor.graph.fused_expr.FusedExprError: fused_expr: add takes 2 arguments, got 1 at position 0
  add(@0)
  ^
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from t_tensor import dtypes
from t_tensor import strides as S
from t_tensor._capi import check, ffi, lib
from t_tensor.autograd.grad_mode import STATE as _GRAD
from t_tensor.autograd.graph import bump_version
from t_tensor.tensor_impl import TensorImpl

__all__ = [
    "FusedExprError", "Token", "ExprNode", "Instr", "FusedKernel", "tokenize", "parse", "to_postfix", "FUSED_OPS",
    "ONNX_TO_FUSED", "MAX_NESTING",
]


class _OpInfo(NamedTuple):
    arity: int
    code: int  # tt_fused_opcode


# Every op a fused expression may use: name -> (number of arguments, C opcode). The names are the
# t_tensor functions that compute the same thing unfused (tt.add, tt.relu, ...).
FUSED_OPS: dict[str, _OpInfo] = {
    "neg": _OpInfo(1, lib.TT_FUSED_NEG),
    "abs": _OpInfo(1, lib.TT_FUSED_ABS),
    "square": _OpInfo(1, lib.TT_FUSED_SQUARE),
    "relu": _OpInfo(1, lib.TT_FUSED_RELU),
    "exp": _OpInfo(1, lib.TT_FUSED_EXP),
    "log": _OpInfo(1, lib.TT_FUSED_LOG),
    "sqrt": _OpInfo(1, lib.TT_FUSED_SQRT),
    "rsqrt": _OpInfo(1, lib.TT_FUSED_RSQRT),
    "reciprocal": _OpInfo(1, lib.TT_FUSED_RECIPROCAL),
    "tanh": _OpInfo(1, lib.TT_FUSED_TANH),
    "sigmoid": _OpInfo(1, lib.TT_FUSED_SIGMOID),
    "erf": _OpInfo(1, lib.TT_FUSED_ERF),
    "gelu": _OpInfo(1, lib.TT_FUSED_GELU),
    "silu": _OpInfo(1, lib.TT_FUSED_SILU),
    "add": _OpInfo(2, lib.TT_FUSED_ADD),
    "sub": _OpInfo(2, lib.TT_FUSED_SUB),
    "mul": _OpInfo(2, lib.TT_FUSED_MUL),
    "div": _OpInfo(2, lib.TT_FUSED_DIV),
    "maximum": _OpInfo(2, lib.TT_FUSED_MAXIMUM),
    "minimum": _OpInfo(2, lib.TT_FUSED_MINIMUM),
    "pow": _OpInfo(2, lib.TT_FUSED_POW),
}
# Other spellings accepted in the text; the tree holds the canonical name.
_ALIASES = {"max": "maximum", "min": "minimum", "negative": "neg"}

# ONNX op types the fusion pass may hand to a fused kernel, and the expression op each becomes
# (Max and Min only with two inputs; Gelu is the exact, erf form).
ONNX_TO_FUSED = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Neg": "neg", "Abs": "abs", "Relu": "relu",
    "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Reciprocal": "reciprocal", "Tanh": "tanh",
    "Sigmoid": "sigmoid", "Erf": "erf", "Gelu": "gelu", "Max": "maximum", "Min": "minimum", "Pow": "pow",
}


# Ops nested deeper than this are refused by the parser (the parser and to_postfix recurse).
MAX_NESTING = 200


class FusedExprError(ValueError):
    """A syntax error, unknown op or wrong arity in a fused expression; ``pos`` is the offset in
    the text where it was found."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        super().__init__(f"fused_expr: {message} at position {pos}\n  {text}\n  {' ' * pos}^")
        self.pos = pos


# ---------------------------------------------------------------------- 1. tokens


class Token(NamedTuple):
    """One token: ``kind`` is "name", "input", "number", "(", ")", "," or "end"; ``value`` the
    name, the input index or the number; ``pos`` its offset in the text."""

    kind: str
    value: Any
    pos: int


_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<input>@(?P<index>\d+))"
    r"|(?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<punct>[(),])"
)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an "end" token.

    >>> [(t.kind, t.value) for t in tokenize("add(@0, -1.5)")]
    [('name', 'add'), ('(', '('), ('input', 0), (',', ','), ('number', -1.5), (')', ')'), ('end', None)]
    """
    if not isinstance(text, str):
        raise TypeError(f"fused_expr: expected a string, got {type(text).__name__}")
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise FusedExprError(f"unexpected character {text[pos]!r}", text, pos)
        kind = match.lastgroup
        if kind == "index":  # the inner group of "input"
            kind = "input"
        if kind == "input":
            tokens.append(Token("input", int(match.group("index")), pos))
        elif kind == "number":
            tokens.append(Token("number", float(match.group()), pos))
        elif kind == "name":
            tokens.append(Token("name", match.group(), pos))
        elif kind == "punct":
            tokens.append(Token(match.group(), match.group(), pos))
        pos = match.end()
    tokens.append(Token("end", None, len(text)))
    return tokens


# ---------------------------------------------------------------------- 2. the tree


@dataclass(frozen=True)
class ExprNode:
    """A node of the expression tree. ``op`` is an op name of :data:`FUSED_OPS`, or "input"
    (``value`` = the input index) or "const" (``value`` = the number); ``pos`` is where it starts in
    the text. ``str(node)`` writes the canonical text back."""

    op: str
    children: tuple[ExprNode, ...] = ()
    value: Any = None
    pos: int = 0

    def __str__(self) -> str:
        if self.op == "input":
            return f"@{self.value}"
        if self.op == "const":
            return repr(self.value)
        return f"{self.op}({','.join(str(c) for c in self.children)})"


def parse(tokens: Sequence[Token], text: str = "") -> ExprNode:
    """The tree of a token list (from :func:`tokenize`); ``text`` is only used in error messages.

    Grammar: ``expr := @i | number | name "(" expr ("," expr)* ")"``.

    >>> tree = parse(tokenize("relu(add(@0,2))"))
    >>> tree.op, [c.op for c in tree.children], str(tree)
    ('relu', ['add'], 'relu(add(@0,2.0))')
    """
    tokens = list(tokens)
    if not tokens or tokens[-1].kind != "end":
        tokens.append(Token("end", None, tokens[-1].pos + 1 if tokens else 0))
    position = 0

    def fail(message: str, token: Token) -> FusedExprError:
        return FusedExprError(message, text, token.pos)

    def describe(token: Token) -> str:
        if token.kind == "end":
            return "the end of the expression"
        return repr(f"@{token.value}" if token.kind == "input" else str(token.value))

    def expr(level: int = 0) -> ExprNode:
        nonlocal position
        token = tokens[position]
        position += 1
        if level > MAX_NESTING:
            raise fail(f"expression nested deeper than {MAX_NESTING} levels", token)
        if token.kind == "input":
            return ExprNode("input", value=token.value, pos=token.pos)
        if token.kind == "number":
            return ExprNode("const", value=token.value, pos=token.pos)
        if token.kind != "name":
            raise fail(f"expected an operand (@i, a number or an op), got {describe(token)}", token)
        name = _ALIASES.get(token.value, token.value)
        if name not in FUSED_OPS:
            raise fail(f"unknown op {token.value!r} (known: {', '.join(sorted(FUSED_OPS))})", token)
        if tokens[position].kind != "(":
            raise fail(f"expected '(' after {token.value}, got {describe(tokens[position])}", tokens[position])
        position += 1
        if tokens[position].kind == ")":
            raise fail(f"{token.value} takes {FUSED_OPS[name].arity} arguments, got 0", token)
        children = [expr(level + 1)]
        while tokens[position].kind == ",":
            position += 1
            children.append(expr(level + 1))
        if tokens[position].kind != ")":
            raise fail(f"expected ',' or ')', got {describe(tokens[position])}", tokens[position])
        position += 1
        if len(children) != FUSED_OPS[name].arity:
            raise fail(f"{token.value} takes {FUSED_OPS[name].arity} arguments, got {len(children)}", token)
        return ExprNode(name, tuple(children), pos=token.pos)

    tree = expr()
    if tokens[position].kind != "end":
        raise fail(f"unexpected {describe(tokens[position])} after the expression", tokens[position])
    return tree


# ---------------------------------------------------------------------- 3. the postfix program


class Instr(NamedTuple):
    """One instruction of the stack machine: ``op`` is "load" (``arg`` = input index), "const"
    (``arg`` = the number) or an op name (``arg`` None: it pops its operands, pushes its result)."""

    op: str
    arg: Any = None

    def __repr__(self) -> str:
        if self.op == "load":
            return f"load @{self.arg}"
        if self.op == "const":
            return f"const {self.arg!r}"
        return self.op


def to_postfix(tree: ExprNode) -> list[Instr]:
    """The postfix program of a tree: operands before the op that uses them.

    >>> to_postfix(parse(tokenize("div(sub(@0,1.5),sqrt(@1))")))
    [load @0, const 1.5, sub, load @1, sqrt, div]
    """
    program: list[Instr] = []

    def visit(node: ExprNode) -> None:
        if node.op == "input":
            program.append(Instr("load", node.value))
        elif node.op == "const":
            program.append(Instr("const", node.value))
        else:
            for child in node.children:
                visit(child)
            program.append(Instr(node.op))

    visit(tree)
    return program


# ---------------------------------------------------------------------- the kernel


class FusedKernel:
    """A fused expression compiled once: ``kernel(*tensors)`` evaluates it in one pass.

    The inputs ``@0 .. @{n-1}`` (n = the largest index used + 1; every one of them must be passed,
    used or not) broadcast together (NumPy rules); they must share one dtype, float32 or float64
    (the kernel does no type promotion: cast first). Literals are rounded to that dtype, as the
    unfused ops do with a Python number. The result is a new contiguous tensor of the broadcast
    shape. An expression without inputs (``add(1,2)``) gives a 0-d tensor of the default dtype.
    Inputs that require grad are refused while grad mode is on (the kernel has no backward).

    >>> import t_tensor as tt
    >>> k = FusedKernel("div(sub(@0,1.5),sqrt(@1))")
    >>> k.n_inputs, k.depth
    (2, 2)
    >>> k(tt.tensor([[2.5], [5.5]], dtype=tt.float64), tt.tensor([1.0, 4.0], dtype=tt.float64))
    tensor([[1.0000, 0.5000],
            [4.0000, 2.0000]], dtype=t_tensor.float64)
    """

    __slots__ = ("text", "tree", "program", "n_inputs", "depth", "_opcodes", "_args", "_constants", "_nconstants")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = parse(tokenize(text), text)
        self.program = to_postfix(self.tree)
        self.n_inputs = 1 + max((i.arg for i in self.program if i.op == "load"), default=-1)
        if self.n_inputs > lib.TT_FUSED_MAX_INPUTS:
            raise ValueError(f"fused_expr: at most {lib.TT_FUSED_MAX_INPUTS} inputs, got @{self.n_inputs - 1}")
        constants: list[float] = []
        opcodes, args = [], []
        for instr in self.program:
            if instr.op == "load":
                opcodes.append(lib.TT_FUSED_LOAD)
                args.append(instr.arg)
            elif instr.op == "const":
                opcodes.append(lib.TT_FUSED_CONST)
                args.append(len(constants))
                constants.append(instr.arg)
            else:
                opcodes.append(FUSED_OPS[instr.op].code)
                args.append(0)
        depth = ffi.new("int *")
        status = lib.tt_fused_check(len(opcodes), opcodes, args, self.n_inputs, len(constants), depth)
        if status != 0:  # a legal tree always gives a valid program, except beyond the C limits
            raise ValueError(
                f"fused_expr: the program of {text!r} exceeds the kernel's limits ({len(opcodes)} instructions, "
                f"at most {lib.TT_FUSED_MAX_INSTRUCTIONS}; stack depth at most {lib.TT_FUSED_MAX_DEPTH})"
            )
        self.depth = depth[0]
        self._opcodes = ffi.new("int32_t[]", opcodes)
        self._args = ffi.new("int32_t[]", args)
        self._constants = ffi.new("double[]", constants or [0.0])
        self._nconstants = len(constants)

    def __repr__(self) -> str:
        return f"FusedKernel({str(self.tree)!r})"

    def __call__(self, *tensors: Any, out: Any = None) -> Any:
        """Evaluate on ``tensors`` (``@0``, ``@1``, ...). ``out``: a contiguous tensor of the
        broadcast shape and the inputs' dtype to write into instead of a new one (what an executor
        with a planned arena passes); it may be one of the inputs itself when that input has the
        broadcast shape and is contiguous (in place), and must not overlap any other way."""
        name = "FusedKernel"
        if len(tensors) != self.n_inputs:
            raise TypeError(f"{name}: {self.text!r} takes {self.n_inputs} tensors, got {len(tensors)}")
        for j, t in enumerate(tensors):
            if not isinstance(t, TensorImpl):
                raise TypeError(f"{name}: input @{j} must be a Tensor, got {type(t).__name__}")
        dtype = tensors[0]._dtype if tensors else dtypes.get_default_dtype()
        if dtype not in (dtypes.float32, dtypes.float64) or any(t._dtype is not dtype for t in tensors):
            got = ", ".join(t._dtype.name for t in tensors)
            raise TypeError(f"{name}: inputs must all be float32 or all float64 (no promotion), got {got}")
        if _GRAD.enabled and any(t._ag is not None and t._ag.requires_grad for t in tensors):
            raise RuntimeError(f"{name}: inputs that require grad are not supported (no backward); use no_grad()")
        shape = tensors[0]._shape if tensors else ()
        if any(t._shape != shape for t in tensors):
            shape = S.broadcast_shapes(*(t._shape for t in tensors), fn=name)
        addresses, strides = [], []
        for t in tensors:
            addresses.append(t.data_ptr())
            strides.extend(t._strides if t._shape == shape else S.expand_strides(t._shape, t._strides, shape, fn=name))
        result = self._output(out, shape, dtype, tensors, name)
        status = lib.tt_fused_eval(
            len(self.program), self._opcodes, self._args, self._constants, self._nconstants,
            len(tensors), addresses or [0], strides or [0], len(shape), shape or [0], result.data_ptr(), dtype.code,
        )
        check(status, name)
        return result

    @staticmethod
    def _output(out: Any, shape: tuple[int, ...], dtype: Any, tensors: tuple, name: str) -> Any:
        """A new tensor for the result, or ``out`` after checking it can be written as one."""
        if out is None:
            if tensors:
                return type(tensors[0])._empty(shape, dtype, name)
            from t_tensor.tensor import Tensor

            return Tensor._empty(shape, dtype, name)
        if not isinstance(out, TensorImpl):
            raise TypeError(f"{name}: out must be a Tensor, got {type(out).__name__}")
        if out._shape != shape or out._dtype is not dtype:
            raise RuntimeError(
                f"{name}: out has shape {list(out._shape)} and dtype {out._dtype.name}, "
                f"expected shape {list(shape)} and dtype {dtype.name}"
            )
        if not out.is_contiguous():
            raise RuntimeError(f"{name}: out must be contiguous")
        for j, t in enumerate(tensors):
            same = t.data_ptr() == out.data_ptr() and t._shape == shape and t.is_contiguous()
            if not same and out._overlaps(t):
                raise RuntimeError(f"{name}: out overlaps input @{j} (only an input identical to out may be written)")
        bump_version(out)  # an in-place write: autograd's saved copies of `out` are stale
        return out

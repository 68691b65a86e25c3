"""The :class:`Optimizer` base class: parameter groups, per-parameter state, ``zero_grad`` and
state dicts, with PyTorch's structure.

A state dict is ``{'state': {index: {name: value}}, 'param_groups': [{option: value, ...,
'params': [index, ...]}]}``: parameters are numbered in the order the groups list them, so a state
dict saved by one optimizer loads into another built over the same parameters in the same order.

>>> import t_tensor as tt
>>> w = tt.tensor([1.0, 2.0], requires_grad=True)
>>> b = tt.tensor(0.5, requires_grad=True)
>>> opt = tt.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.25}], lr=0.5, momentum=0.9)
>>> [g["lr"] for g in opt.param_groups]
[0.5, 0.25]
>>> w.grad, b.grad = tt.tensor([1.0, 1.0]), tt.tensor(2.0)
>>> opt.step()
>>> w.tolist(), b.item()
([0.5, 1.5], 0.0)
>>> sd = opt.state_dict()
>>> sorted(sd["state"]), sd["param_groups"][1]["params"]
([0, 1], [1])
>>> opt.zero_grad()
>>> w.grad is None
True
"""

from __future__ import annotations

import copy
import functools
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from t_tensor.autograd.grad_mode import enable_grad
from t_tensor.tensor import Tensor

__all__ = ["Optimizer", "required"]


class _Required:
    """The default of an option every parameter group must give (``lr`` of SGD in old PyTorch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


#: Marks an option without a default: a group that does not give it is refused.
required = _Required()

# Options PyTorch's optimizers carry for implementations t_tensor does not have: accepted with
# their "off" value (so state dicts keep PyTorch's keys), refused when switched on.
_UNSUPPORTED_ON = ("capturable", "differentiable", "fused")


def _typename(value: Any) -> str:
    return type(value).__module__ + "." + type(value).__qualname__


class Optimizer:
    """Base class of the optimizers: holds ``param_groups`` (a list of dicts, each with its
    ``'params'`` and its options) and ``state`` (per parameter: a dict of tensors and numbers).

    Subclasses pass their options' defaults to ``__init__`` and implement :meth:`step`.
    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter groups
    with their own options; the defaults fill in the rest).

    >>> import t_tensor as tt
    >>> p = tt.zeros(3, requires_grad=True)
    >>> opt = tt.optim.Adam([p], lr=0.01)
    >>> opt.add_param_group({"params": tt.ones(2, requires_grad=True), "lr": 0.1})
    >>> len(opt.param_groups), opt.param_groups[1]["betas"]
    (2, (0.9, 0.999))
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Each subclass's step records that it ran, so that a learning-rate scheduler can warn when
        # it is stepped before the optimizer (PyTorch's warning).
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None:
            @functools.wraps(step)
            def recorded_step(self: Optimizer, *args: Any, **kw: Any) -> Any:
                self._opt_called = True
                return step(self, *args, **kw)

            cls.step = recorded_step  # type: ignore[method-assign]

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        name = type(self).__name__
        for option in _UNSUPPORTED_ON:
            if defaults.get(option):
                raise ValueError(f"{name}: {option}=True is not supported by t_tensor (there is one implementation)")
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                f"{name}: params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {_typename(params)}"
            )
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError(f"{name}: optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the optimizer's defaults fill the missing
        ones). A parameter may belong to one group only.

        >>> import t_tensor as tt
        >>> opt = tt.optim.SGD([tt.zeros(2, requires_grad=True)], lr=0.1)
        >>> opt.add_param_group({"params": [tt.zeros(1, requires_grad=True)], "momentum": 0.9})
        >>> opt.param_groups[1]["lr"], opt.param_groups[1]["momentum"]
        (0.1, 0.9)
        """
        name = f"{type(self).__name__}.add_param_group"
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}: param_group must be a dict, but got {_typename(param_group)}")
        if "params" not in param_group:
            raise ValueError(f"{name}: a parameter group needs a 'params' entry")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                f"{name}: optimizer parameters need to be organized in ordered collections, but the ordering of "
                "tensors in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) and len(p) == 2 else p for p in params]
        if names and len(names) != len(params):
            raise ValueError(f"{name}: all optimizer params should be with/without names. Some param names are missing")
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError(f"{name}: can't optimize a non-leaf Tensor")
        for option, default in self.defaults.items():
            if default is required and option not in param_group:
                raise ValueError(f"{name}: parameter group didn't specify a value of required optimization "
                                 f"parameter {option}")
        for option in _UNSUPPORTED_ON:
            if param_group.get(option, self.defaults.get(option)):
                raise ValueError(f"{name}: {option}=True is not supported by t_tensor")
        ids = [id(p) for p in params]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{name}: a parameter group contains the same parameter twice")
        for other in self.param_groups:
            if bool(names) != ("param_names" in other):
                raise ValueError(f"{name}: all optimizer param groups should be with/without names")
            if not set(ids).isdisjoint(id(p) for p in other["params"]):
                raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        # valid: the group is the given dict itself, completed (as PyTorch, later edits to it count)
        group = param_group
        group["params"] = params
        if names:
            group["param_names"] = names
        for option, default in self.defaults.items():
            group.setdefault(option, default)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: set every parameter's ``.grad`` to None (default), or fill it with
        zeros and detach it when ``set_to_none=False``."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters from their ``.grad`` (parameters whose grad is None are left alone).
        `closure`, if given, re-evaluates the model and returns the loss (run with grad enabled);
        its result is returned."""
        raise NotImplementedError

    def _closure_loss(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}``, PyTorch's
        layout. The state's tensors are the optimizer's own (not copies), as in PyTorch."""
        mapping: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                mapping.setdefault(id(p), len(mapping))
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {mapping[id(p)] if isinstance(p, Tensor) else p: v for p, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (from this optimizer or another one built over
        parameters of the same shapes, in the same groups). Floating point state tensors are copied
        and cast to their parameter's dtype, except ``'step'``; the groups' options are taken from
        the state dict."""
        name = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            raise ValueError(f"{name}: expected a dict with 'state' and 'param_groups'")
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}: loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    f"{name}: loaded state dict contains a parameter group that doesn't match the size of "
                    "optimizer's group"
                )
        id_map = {
            index: p
            for group, saved in zip(self.param_groups, saved_groups, strict=True)
            for index, p in zip(saved["params"], group["params"], strict=True)
        }
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                state[id_map[key]] = _cast(id_map[key], value, None)
            else:
                state[key] = value
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups


def _cast(param: Tensor, value: Any, key: Any) -> Any:
    """A copy of a loaded state value, its tensors cast to the parameter's floating dtype (not 'step')."""
    if isinstance(value, Tensor):
        value = value.detach()
        if key != "step" and param.dtype.is_floating_point and value.dtype is not param.dtype:
            return value.to(param.dtype)
        return value.clone()
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v, None) for v in value)
    return value


def params_with_grads(group: dict[str, Any]) -> Iterable[tuple[Tensor, Tensor]]:
    """The (parameter, gradient) pairs of a group whose gradient is set, detached, in order."""
    for p in group["params"]:
        grad = p.grad
        if grad is not None:
            yield p, grad.detach()


def check_number(name: str, option: str, value: Any, low: float = 0.0, high: float | None = None,
                 high_open: bool = False) -> None:
    """Refuse a hyperparameter that is not a real number in ``[low, high]`` (or ``[low, high)``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: {option} must be a number, got {_typename(value)}")
    if not value >= low or (high is not None and (value >= high if high_open else value > high)):
        raise ValueError(f"{name}: Invalid {option} value: {value}")

"""``Module``: the base class of layers and models, as ``torch.nn.Module``.

A module keeps three ordered registries, filled by plain attribute assignment:

* ``_parameters``: a :class:`~t_tensor.nn.Parameter` assigned as an attribute (or given to
  :meth:`Module.register_parameter`);
* ``_buffers``: tensors that are state but not trained (running statistics), from
  :meth:`Module.register_buffer`;
* ``_modules``: submodules assigned as attributes.

From them it derives what every model needs: :meth:`~Module.parameters` (for an optimizer),
:meth:`~Module.state_dict` / :meth:`~Module.load_state_dict` (checkpoints, keys as PyTorch's:
``"0.weight"``, ``"encoder.bias"``), :meth:`~Module.train` / :meth:`~Module.eval`,
:meth:`~Module.zero_grad`, :meth:`~Module.to`, :meth:`~Module.apply`, and a repr like PyTorch's.
Calling a module calls its ``forward``.

>>> import t_tensor as tt
>>> class TwoLayer(tt.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.hidden = tt.nn.Linear(3, 4)
...         self.out = tt.nn.Linear(4, 1)
...     def forward(self, x):
...         return self.out(self.hidden(x).relu())
>>> model = TwoLayer()
>>> model
TwoLayer(
  (hidden): Linear(in_features=3, out_features=4, bias=True)
  (out): Linear(in_features=4, out_features=1, bias=True)
)
>>> [name for name, _ in model.named_parameters()]
['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
>>> model(tt.ones(2, 3)).shape
(2, 1)
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from t_tensor import dtypes
from t_tensor.autograd.grad_mode import no_grad
from t_tensor.nn.parameter import Parameter, is_parameter
from t_tensor.tensor import Tensor

__all__ = ["IncompatibleKeys", "Module"]


class IncompatibleKeys(NamedTuple):
    """What :meth:`Module.load_state_dict` returns: the keys it expected and did not get, and
    the keys it got and did not expect."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def _type_name(value: Any) -> str:
    return type(value).__name__


class Module:
    """Base class of every layer and model: subclass it, assign parameters and submodules as
    attributes in ``__init__`` (after ``super().__init__()``), and write ``forward``.

    >>> import t_tensor as tt
    >>> class Scale(tt.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.factor = tt.nn.Parameter(tt.tensor([2.0]))
    ...         self.register_buffer("calls", tt.zeros((), dtype=tt.int64))
    ...     def forward(self, x):
    ...         self.calls += 1
    ...         return x * self.factor
    >>> m = Scale()
    >>> m(tt.tensor([1.0, 3.0])).tolist()
    [2.0, 6.0]
    >>> sorted(m.state_dict())
    ['calls', 'factor']
    """

    training: bool
    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------------ registration

    def _check_initialized(self, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")

    @staticmethod
    def _check_name(name: Any, kind: str, fn: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{fn}: {kind} name should be a string, got {_type_name(name)}")
        if name == "":
            raise KeyError(f'{fn}: {kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{fn}: {kind} name can\'t contain ".", got: {name}')

    def register_parameter(self, name: str, param: Any) -> None:
        """Add ``param`` (a :class:`Parameter` or None) as the parameter ``name``.

        >>> import t_tensor as tt
        >>> m = tt.nn.Module()
        >>> m.register_parameter("w", tt.nn.Parameter(tt.ones(2)))
        >>> [n for n, _ in m.named_parameters()]
        ['w']
        """
        self._check_initialized("parameters")
        self._check_name(name, "parameter", "register_parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"register_parameter: attribute '{name}' already exists")
        if param is not None and not is_parameter(param):
            raise TypeError(f"register_parameter: cannot assign '{_type_name(param)}' object to parameter "
                            f"'{name}' (t_tensor.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"register_parameter: cannot assign non-leaf Tensor to parameter '{name}'. "
                             "Model parameters must be created explicitly.")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        """Add ``tensor`` (or None) as the buffer ``name``: state saved in :meth:`state_dict`
        (unless ``persistent=False``) and converted by :meth:`to`, but not a parameter.

        >>> import t_tensor as tt
        >>> m = tt.nn.Module()
        >>> m.register_buffer("running_mean", tt.zeros(3))
        >>> list(m.state_dict()), list(m.parameters())
        (['running_mean'], [])
        """
        self._check_initialized("buffers")
        self._check_name(name, "buffer", "register_buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"register_buffer: attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_module(self, name: str, module: Module | None) -> None:
        """Add ``module`` (or None) as the submodule ``name`` (what attribute assignment does)."""
        self.add_module(name, module)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add ``module`` (or None) as the submodule ``name``."""
        self._check_initialized("submodules")
        if not isinstance(name, str):
            raise TypeError(f"add_module: module name should be a string, got {_type_name(name)}")
        if "." in name:
            raise KeyError(f'add_module: module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('add_module: module name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"add_module: attribute '{name}' already exists")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {_type_name(module)} is not a Module subclass")
        self._modules[name] = module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if is_parameter(value):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(t_tensor.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(t_tensor.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' (Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *containers: Any) -> None:
        for container in containers:
            if isinstance(container, set):
                container.discard(name)
            elif name in container:
                del container[name]

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: the registries
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = d.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # ------------------------------------------------------------------ iteration

    def _named_members(self, get: Callable[[Module], Any], prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get(module):
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield (module_prefix + "." + name if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        """``(name, parameter)`` pairs, this module's first, then each submodule's with its
        prefix; a parameter shared by several modules is given once.

        >>> import t_tensor as tt
        >>> net = tt.nn.Sequential(tt.nn.Linear(2, 2), tt.nn.ReLU(), tt.nn.Linear(2, 1, bias=False))
        >>> [(n, p.shape) for n, p in net.named_parameters()]
        [('0.weight', (2, 2)), ('0.bias', (2,)), ('2.weight', (1, 2))]
        """
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Any]:
        """The parameters (what an optimizer is given), each once.

        >>> import t_tensor as tt
        >>> sum(p.numel() for p in tt.nn.Linear(3, 2).parameters())
        8
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        """``(name, buffer)`` pairs, as :meth:`named_parameters`."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Any]:
        """The buffers, each once."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for the direct submodules, each once."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct submodules."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module (name ``prefix``, ``""`` by default) and all its
        submodules, depth first, each once.

        >>> import t_tensor as tt
        >>> net = tt.nn.Sequential(tt.nn.Linear(2, 2), tt.nn.Sequential(tt.nn.ReLU()))
        >>> [name for name, _ in net.named_modules()]
        ['', '0', '1', '1.0']
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + "." + name if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and all its submodules, each once."""
        for _, module in self.named_modules():
            yield module

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``""``: this module)."""
        module: Module = self
        if target == "":
            return module
        for item in target.split("."):
            child = module._modules.get(item) if item in module._modules else None
            if not isinstance(child, Module):
                raise AttributeError(f"get_submodule: {type(module).__name__} has no attribute `{item}`")
            module = child
        return module

    # ------------------------------------------------------------------ state

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Every parameter and persistent buffer by dotted name (detached tensors sharing the
        module's memory, unless ``keep_vars``), in registration order.

        >>> import t_tensor as tt
        >>> sd = tt.nn.Linear(3, 2).state_dict()
        >>> [(k, v.shape, v.requires_grad) for k, v in sd.items()]
        [('weight', (2, 3), False), ('bias', (2,), False)]
        """
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> IncompatibleKeys:
        """Copy the values of ``state_dict`` (tensors or NumPy arrays, by the names
        :meth:`state_dict` gives) into this module's parameters and buffers, in place.

        With ``strict`` (the default), a missing or unexpected key is an error; otherwise they
        are returned. A value of the wrong shape is always an error. ``assign=True`` makes the
        given tensors the module's (as Parameters) instead of copying into the existing ones.

        >>> import t_tensor as tt
        >>> a, b = tt.nn.Linear(2, 2), tt.nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        >>> bool((a.weight == b.weight).all())
        True
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"load_state_dict: expected a mapping, got {_type_name(state_dict)}")
        errors: list[str] = []
        missing: list[str] = []
        expected: set[str] = set()
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            prefix = module_prefix + "." if module_prefix else ""
            local = [(n, p, True) for n, p in module._parameters.items() if p is not None]
            local += [(n, b, False) for n, b in module._buffers.items()
                      if b is not None and n not in module._non_persistent_buffers_set]
            for name, current, is_param in local:
                key = prefix + name
                expected.add(key)
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = _as_tensor(state_dict[key], key, errors)
                if value is None:
                    continue
                if value.shape != current.shape:
                    errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {current.shape}.")
                    continue
                if assign:
                    if is_param:
                        new = Parameter(value.to(current.dtype), requires_grad=current.requires_grad)
                        module._parameters[name] = new
                    else:
                        module._buffers[name] = value
                    continue
                try:
                    with no_grad():
                        current.copy_(value)
                except Exception as error:  # noqa: BLE001 (reported with its key, as PyTorch)
                    errors.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{current.shape} and whose dimensions in the checkpoint are {value.shape}, an "
                                  f"exception occurred : {error}.")
        unexpected = [k for k in state_dict.keys() if k not in expected]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        return IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ modes and conversions

    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=True``) or evaluation mode on this module and all its
        submodules (Dropout acts only in training mode); returns self."""
        if not isinstance(mode, bool):
            raise ValueError("train: training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        for module in self.children():
            module.train(mode)  # through each child's own train(), which a subclass may override
        return self

    def eval(self) -> Module:
        """Evaluation mode (``train(False)``); returns self.

        >>> import t_tensor as tt
        >>> net = tt.nn.Sequential(tt.nn.Dropout(0.5))
        >>> net.eval().training, net[0].training
        (False, False)
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (freezing with False); returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None (the default), or to zeros in place.

        >>> import t_tensor as tt
        >>> lin = tt.nn.Linear(2, 1)
        >>> lin(tt.ones(1, 2)).sum().backward()
        >>> lin.weight.grad is None
        False
        >>> lin.zero_grad()
        >>> lin.weight.grad is None
        True
        """
        for param in self.parameters():
            grad = param.grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if grad.grad_fn is not None:
                    grad = grad.detach()
                    param.grad = grad
                with no_grad():
                    grad.zero_()

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module; returns self.
        The usual use is custom initialization."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply_to_tensors(self, convert: Callable[[Any], Any]) -> Module:
        """Replace every parameter's data (keeping the Parameter object, as PyTorch), its
        gradient, and every buffer by ``convert`` of them."""
        for module in self.modules():
            for param in module._parameters.values():
                if param is None:
                    continue
                with no_grad():
                    new = convert(param)
                if new is not param:
                    param.data = new
                    if param.grad is not None:
                        param.grad = convert(param.grad)
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    module._buffers[name] = convert(buffer)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Convert the floating-point parameters and buffers to a floating-point ``dtype``
        (integer buffers keep theirs); the device may only be ``'cpu'``. In place; returns self.

        >>> import t_tensor as tt
        >>> tt.nn.Linear(2, 2).to(tt.float64).weight.dtype
        t_tensor.float64
        """
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"to: unexpected keyword argument(s) {', '.join(sorted(kwargs))}")
        for arg in args:
            if isinstance(arg, str) or arg is None:
                device = arg if arg is not None else device
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
            else:
                dtype = arg
        if device is not None and device != "cpu":
            raise RuntimeError(f"to: only the 'cpu' device exists, got {device!r}")
        if dtype is None:
            return self
        target = dtypes.as_dtype(dtype, fn="to")
        if not target.is_floating_point:
            raise TypeError(f"to: nn.Module.to only accepts floating point dtypes, but got desired dtype={target}")
        return self._apply_to_tensors(lambda t: t.to(target) if t.dtype.is_floating_point else t)

    def float(self) -> Module:
        """Floating-point parameters and buffers to float32."""
        return self.to(dtypes.float32)

    def double(self) -> Module:
        """Floating-point parameters and buffers to float64."""
        return self.to(dtypes.float64)

    def half(self) -> Module:
        """Floating-point parameters and buffers to float16."""
        return self.to(dtypes.float16)

    def cpu(self) -> Module:
        """The only device: returns self."""
        return self

    # ------------------------------------------------------------------ copying

    def __deepcopy__(self, memo: dict) -> Module:
        """``copy.deepcopy(module)``: every parameter, buffer, gradient and tensor attribute is
        cloned (a parameter's clone is a Parameter with the same ``requires_grad``), sharing
        inside the module is kept (a layer used twice stays one layer), the rest is deep-copied.

        >>> import copy
        >>> import t_tensor as tt
        >>> net = tt.nn.Sequential(tt.nn.Linear(2, 2))
        >>> twin = copy.deepcopy(net)
        >>> twin[0].weight.data_ptr() != net[0].weight.data_ptr(), isinstance(twin[0].weight, tt.nn.Parameter)
        (True, True)
        >>> bool((twin[0].weight == net[0].weight).all())
        True
        """
        for module in self.modules():
            tensors = list(module._parameters.values()) + list(module._buffers.values())
            tensors += [v for v in module.__dict__.values() if isinstance(v, Tensor)]
            for tensor in tensors:
                if tensor is not None and id(tensor) not in memo:
                    memo[id(tensor)] = _clone_tensor(tensor, memo)
        new = object.__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            object.__setattr__(new, name, copy.deepcopy(value, memo))
        return new

    # ------------------------------------------------------------------ printing

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in its repr (its constructor arguments);
        subclasses override it."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for name, module in self._modules.items():
            body = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _as_tensor(value: Any, key: str, errors: list[str]) -> Any:
    """A state_dict value as a tensor (NumPy arrays are copied in), or None with an error noted."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        from t_tensor.creation import tensor

        return tensor(value)
    errors.append(f'While copying the parameter named "{key}", expected a Tensor or a NumPy array in the '
                  f"checkpoint, got {_type_name(value)}.")
    return None


def _clone_tensor(tensor: Any, memo: dict) -> Any:
    """A detached copy of ``tensor`` with its own memory, its ``requires_grad``, a copy of its
    gradient, and registered as a Parameter if ``tensor`` is one (for ``__deepcopy__``)."""
    with no_grad():
        clone = tensor.detach().clone()
    if is_parameter(tensor):
        clone = Parameter(clone, requires_grad=tensor.requires_grad)
    elif tensor.requires_grad:
        clone.requires_grad_(True)
    grad = tensor.grad
    if grad is not None:
        if id(grad) not in memo:
            memo[id(grad)] = _clone_tensor(grad, memo)
        clone.grad = memo[id(grad)]
    return clone

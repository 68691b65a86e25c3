"""Containers: ``Sequential`` (a pipeline), ``ModuleList`` and ``ModuleDict`` (modules held in a
list or a dict, so that their parameters are registered).

>>> import t_tensor as tt
>>> net = tt.nn.Sequential(tt.nn.Linear(4, 8), tt.nn.ReLU(), tt.nn.Linear(8, 2))
>>> net(tt.ones(3, 4)).shape
(3, 2)
>>> len(net), type(net[1]).__name__, type(net[1:]).__name__
(3, 'ReLU', 'Sequential')
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from t_tensor.nn.module import Module

__all__ = ["ModuleDict", "ModuleList", "Sequential"]


def _index(idx: Any, size: int, fn: str) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"{fn}: index {idx} is out of range")
    return idx + size if idx < 0 else idx


class Sequential(Module):
    """Modules applied one after the other: ``Sequential(a, b, c)(x) == c(b(a(x)))``. Given an
    ``OrderedDict``, the modules take its names (else ``"0"``, ``"1"``, ...).

    >>> import t_tensor as tt
    >>> from collections import OrderedDict
    >>> tt.nn.Sequential(OrderedDict([("fc", tt.nn.Linear(2, 3)), ("act", tt.nn.Tanh())]))
    Sequential(
      (fc): Linear(in_features=2, out_features=3, bias=True)
      (act): Tanh()
    )
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx: Any, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx: Any) -> None:
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "Sequential")]]
        for key in targets:
            del self._modules[key]
        # renumber as PyTorch does, keeping the order
        self._renumber()

    def _renumber(self) -> None:
        items = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(items):
            self._modules[str(i)] = module

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"insert: module should be of type Module, got {type(module).__name__}")
        n = len(self)
        index = operator.index(index)
        if not -n <= index <= n:
            raise IndexError(f"insert: index {index} is out of range")
        if index < 0:
            index += n
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self


class ModuleList(Module):
    """A list of modules whose parameters belong to the holder (a plain Python list would hide
    them from :meth:`~Module.parameters`).

    >>> import t_tensor as tt
    >>> layers = tt.nn.ModuleList([tt.nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters())), len(layers)
    (6, 3)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: Any, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: Any) -> None:
        items = list(self._modules.values())
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_index(idx, len(self), "ModuleList")]
        self._modules.clear()
        for i, module in enumerate(items):
            self._modules[str(i)] = module

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of ``modules`` at the end; returns self."""
        if isinstance(modules, (Module, str)) or not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before ``index``."""
        items = list(self._modules.values())
        items.insert(operator.index(index), module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleList has no forward: iterate over its modules")


class ModuleDict(Module):
    """A dict of modules (insertion-ordered) whose parameters belong to the holder.

    >>> import t_tensor as tt
    >>> heads = tt.nn.ModuleDict({"cls": tt.nn.Linear(4, 3), "reg": tt.nn.Linear(4, 1)})
    >>> list(heads.keys()), heads["reg"].out_features
    (['cls', 'reg'], 1)
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()  # type: ignore[return-value]

    def values(self) -> Iterable[Module]:
        return self._modules.values()  # type: ignore[return-value]

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) modules from a mapping or from ``(name, module)`` pairs."""
        if isinstance(modules, Mapping):
            pairs = list(modules.items())
        else:
            pairs = []
            for j, pair in enumerate(modules):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} should be a (name, module) pair")
                pairs.append((pair[0], pair[1]))
        for key, module in pairs:
            self[key] = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleDict has no forward: index it by name")

"""``save`` and ``load``: tensors, and nested dicts / lists / tuples of tensors, numbers, strings
and None (state dicts of modules, optimizers and schedulers), in a file that holds no code.

The file is a zip archive: ``t_tensor/structure.json`` describes the object (containers, numbers,
strings, and a reference per tensor, with its dtype, shape and ``requires_grad``), and each tensor's
elements are one ``t_tensor/tensors/<n>.npy`` entry in NumPy's ``.npy`` format (little-endian,
C order; no pickled objects). Loading rebuilds the object from that description alone: nothing in
the file is executed, and anything outside the allowed vocabulary is refused -- the equivalent of
``torch.load(..., weights_only=True)``.

>>> import io, t_tensor as tt
>>> buffer = io.BytesIO()
>>> tt.save({"w": tt.tensor([[1.0, 2.0]]), "step": 3, "names": ("a", "b")}, buffer)
>>> _ = buffer.seek(0)
>>> tt.load(buffer)
{'w': tensor([[1., 2.]]), 'step': 3, 'names': ('a', 'b')}
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from t_tensor import dtypes
from t_tensor.creation import tensor as _tensor
from t_tensor.dtypes import DType
from t_tensor.tensor import Tensor

__all__ = ["load", "save"]

_FORMAT = "t_tensor-save"
_VERSION = 1
_STRUCTURE = "t_tensor/structure.json"
_TENSORS = "t_tensor/tensors/"

# The containers a file may hold, by the tag that names them in structure.json.
_MAPPINGS: dict[str, type] = {"dict": dict, "OrderedDict": OrderedDict, "Counter": Counter}
_SEQUENCES: dict[str, type] = {"list": list, "tuple": tuple}
_SCALARS = (type(None), bool, int, float, str)
_DTYPES: dict[str, DType] = {dtype.name: dtype for dtype in dtypes.ALL_DTYPES}  # canonical names only


def _opened(f: Any, mode: str, fn: str) -> tuple[Any, bool]:
    """(a binary file object, whether we opened it) for a path or an already open file."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return open(f, mode + "b"), True  # noqa: SIM115 (closed by the caller)
    needed = "write" if mode == "w" else "read"
    if not hasattr(f, needed):
        raise TypeError(f"{fn}: expected a path or a binary file object, got {type(f).__name__}")
    return f, False


# ---------------------------------------------------------------------- save


class _Encoder:
    """Turns an object into its JSON description, collecting the tensors' arrays."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.seen: dict[int, int] = {}  # id(tensor) -> index, so a tensor stored twice loads as one object
        self.keep: list[Tensor] = []  # keeps the ids above valid while encoding

    def encode(self, obj: Any, path: str) -> Any:
        kind = type(obj)
        if kind in _SCALARS:
            if kind is float and not math.isfinite(obj):
                return {"float": repr(obj)}  # 'nan', 'inf', '-inf': JSON proper has no such numbers
            return obj
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if kind is DType:
            return {"dtype": obj.name}
        for tag, container in _SEQUENCES.items():
            if kind is container:
                return {tag: [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        for tag, container in _MAPPINGS.items():
            if kind is container:
                return {tag: [[self._key(k, path), self.encode(v, f"{path}[{k!r}]")] for k, v in obj.items()]}
        raise TypeError(
            f"save: cannot save {path} of type {kind.__module__}.{kind.__qualname__}: only tensors, dtypes, None, "
            "bool, int, float, str and lists, tuples, dicts (dict, OrderedDict, Counter) of them can be saved"
        )

    def _key(self, key: Any, path: str) -> Any:
        if isinstance(key, Tensor) or (type(key) is tuple and any(isinstance(k, Tensor) for k in key)):
            raise TypeError(f"save: {path} has a tensor as a dict key; keys must be numbers, strings, None or tuples")
        return self.encode(key, f"{path} key")

    def _tensor(self, t: Tensor) -> dict[str, Any]:
        index = self.seen.get(id(t))
        if index is None:
            index = self.seen[id(t)] = len(self.arrays)
            self.keep.append(t)
            self.arrays.append(np.array(t.detach().numpy(), order="C"))  # a copy, also of a 0-d tensor
        return {"tensor": index, "dtype": t.dtype.name, "shape": list(t.shape), "requires_grad": t.requires_grad}


def save(obj: Any, f: Any) -> None:
    """Write `obj` (a tensor, or nested dicts / lists / tuples of tensors, numbers, strings, None,
    dtypes) to `f`, a path or a binary file object. Each tensor is stored whole with its dtype, shape
    and ``requires_grad``; views are saved as copies of what they show, and a tensor that appears
    twice in `obj` is stored once (and loads as one tensor). Other types are refused (TypeError).

    >>> import io, t_tensor as tt
    >>> buffer = io.BytesIO()
    >>> tt.save(tt.arange(3, dtype=tt.int8), buffer)
    >>> _ = buffer.seek(0)
    >>> tt.load(buffer)
    tensor([0, 1, 2], dtype=t_tensor.int8)
    """
    encoder = _Encoder()
    structure = {"format": _FORMAT, "version": _VERSION, "object": encoder.encode(obj, "the object")}
    text = json.dumps(structure, allow_nan=False)
    handle, owned = _opened(f, "w", "save")
    try:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as archive:
            archive.writestr(_STRUCTURE, text)
            for i, array in enumerate(encoder.arrays):
                with archive.open(f"{_TENSORS}{i}.npy", "w", force_zip64=True) as entry:
                    np.lib.format.write_array(entry, array, allow_pickle=False)
    finally:
        if owned:
            handle.close()


# ---------------------------------------------------------------------- load


class _Decoder:
    """Rebuilds an object from its JSON description; refuses anything it does not know."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.tensors: dict[int, Tensor] = {}

    def decode(self, node: Any) -> Any:
        if type(node) in _SCALARS:
            return node
        if type(node) is not dict:
            raise ValueError(f"load: unexpected {type(node).__name__} in the file's structure")
        if "tensor" in node:
            return self._tensor(node)
        if len(node) != 1:
            raise ValueError(f"load: unknown entry {sorted(node)} in the file's structure")
        (tag, value), = node.items()
        if tag == "float" and value in ("nan", "inf", "-inf"):
            return float(value)
        if tag == "dtype" and value in _DTYPES:
            return _DTYPES[value]
        if tag in _SEQUENCES and type(value) is list:
            return _SEQUENCES[tag](self.decode(v) for v in value)
        if tag in _MAPPINGS and type(value) is list:
            result = _MAPPINGS[tag]()
            for pair in value:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError("load: a dict entry of the file's structure is not a [key, value] pair")
                key = self.decode(pair[0])
                if isinstance(key, (Tensor, list, dict)):
                    raise ValueError(f"load: a dict key of type {type(key).__name__} in the file's structure")
                result[key] = self.decode(pair[1])
            return result
        raise ValueError(f"load: unknown entry {tag!r} in the file's structure (only tensors, numbers, strings, "
                         "None, dtypes, lists, tuples and dicts can be loaded)")

    def _tensor(self, node: dict[str, Any]) -> Tensor:
        if set(node) != {"tensor", "dtype", "shape", "requires_grad"}:
            raise ValueError(f"load: malformed tensor entry {sorted(node)} in the file's structure")
        index, name, shape, requires_grad = node["tensor"], node["dtype"], node["shape"], node["requires_grad"]
        if type(index) is not int or type(requires_grad) is not bool or type(shape) is not list:
            raise ValueError("load: malformed tensor entry in the file's structure")
        if index in self.tensors:
            return self.tensors[index]
        dtype = _DTYPES.get(name) if type(name) is str else None
        if dtype is None:
            raise ValueError(f"load: malformed dtype {name!r} in the file's structure")
        try:
            with self.archive.open(f"{_TENSORS}{index}.npy") as entry:
                array = np.lib.format.read_array(entry, allow_pickle=False)
        except KeyError:
            raise ValueError(f"load: the file has no data for tensor {index}") from None
        except (ValueError, OSError, EOFError, MemoryError, zipfile.BadZipFile) as error:  # object arrays, truncated
            raise ValueError(f"load: the data of tensor {index} cannot be read ({error})") from None
        if array.dtype != dtype.numpy or list(array.shape) != shape:
            raise ValueError(f"load: tensor {index}'s data ({array.dtype}, {list(array.shape)}) does not match its "
                             f"description ({name}, {shape})")
        result = _tensor(array, dtype=dtype)
        if requires_grad:
            result.requires_grad_(True)
        self.tensors[index] = result
        return result


def load(f: Any, map_location: Any = None, *, weights_only: bool = True) -> Any:
    """Read back what :func:`save` wrote to `f` (a path or a binary file object): tensors come back
    as new t_tensor tensors with their dtype, shape and ``requires_grad``; containers with their
    types (dict, OrderedDict, Counter, list, tuple). Nothing in the file is executed: content outside
    that vocabulary, or a file that is not a t_tensor save file, is refused (ValueError).

    `map_location` may only be None or ``'cpu'``; `weights_only` must stay True (PyTorch's option
    to unpickle arbitrary objects does not exist here).

    >>> import io, t_tensor as tt
    >>> buffer = io.BytesIO()
    >>> tt.save([tt.tensor(True), tt.tensor(1.5, dtype=tt.float16)], buffer)
    >>> _ = buffer.seek(0)
    >>> tt.load(buffer)
    [tensor(True), tensor(1.5000, dtype=t_tensor.float16)]
    """
    if map_location is not None and str(map_location) != "cpu":
        raise RuntimeError(f"load: only the 'cpu' device exists, got map_location={map_location!r}")
    if weights_only is not True:
        raise ValueError("load: weights_only=False (unpickling arbitrary objects) is not supported; files saved by "
                         "t_tensor.save need no code to load")
    handle, owned = _opened(f, "r", "load")
    try:
        try:
            archive = zipfile.ZipFile(handle, "r")
        except zipfile.BadZipFile:
            raise ValueError("load: not a file written by t_tensor.save (not a zip archive)") from None
        with archive:
            try:
                structure = json.loads(archive.read(_STRUCTURE).decode("utf-8"))
            except KeyError:
                raise ValueError(f"load: not a file written by t_tensor.save (no {_STRUCTURE})") from None
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
                raise ValueError(f"load: the file's structure is not valid JSON ({error})") from None
            if type(structure) is not dict or structure.get("format") != _FORMAT or "object" not in structure:
                raise ValueError("load: not a file written by t_tensor.save (unknown format)")
            if structure.get("version") != _VERSION:
                raise ValueError(f"load: unsupported format version {structure.get('version')!r} "
                                 f"(this t_tensor reads version {_VERSION})")
            try:
                return _Decoder(archive).decode(structure["object"])
            except RecursionError:
                raise ValueError("load: the file's structure is nested too deeply") from None
    finally:
        if owned:
            handle.close()

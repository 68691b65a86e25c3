"""tt.save / tt.load: exact round trips of tensors (every dtype, 0-d, empty, any layout) and of
nested containers with numbers and strings; files and paths; and refusal of everything outside the
allowed vocabulary, on saving and on loading (no code is ever run from a file)."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from collections import Counter, OrderedDict, namedtuple
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import LAYOUTS, apply_layout, base_shape
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
from t_tensor.dtypes import ALL_DTYPES


def _round_trip(obj):
    buffer = io.BytesIO()
    tt.save(obj, buffer)
    buffer.seek(0)
    return tt.load(buffer)


def _data(dtype: tt.DType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values that stress exactness: extremes, NaN, infinities, -0.0, subnormals."""
    n = int(np.prod(shape))
    if dtype is tt.bool:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.is_floating_point:
        info = np.finfo(dtype.numpy)
        special = np.array([np.nan, np.inf, -np.inf, -0.0, info.max, info.tiny / 4, info.eps], dtype=dtype.numpy)
        values = rng.standard_normal(n).astype(dtype.numpy)
        values[: min(n, special.size)] = special[: min(n, special.size)]
        return rng.permutation(values).reshape(shape)
    info = np.iinfo(dtype.numpy)
    values = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype.numpy)
    values[: min(n, 2)] = np.array([info.min, info.max], dtype=dtype.numpy)[: min(n, 2)]
    return values.reshape(shape)


def _same(got: tt.Tensor, want: tt.Tensor) -> None:
    assert isinstance(got, tt.Tensor)
    assert got.dtype is want.dtype and got.shape == want.shape
    assert got.requires_grad == want.requires_grad and got.is_leaf
    # bitwise equal (NaN payloads and -0.0 included)
    as_bytes = [np.ascontiguousarray(t.detach().numpy()).reshape(-1).view(np.uint8) for t in (got, want)]
    np.testing.assert_array_equal(*as_bytes)


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(ALL_DTYPES), shape=st.lists(st.integers(0, 4), max_size=4).map(tuple),
       layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1))
def test_tensor_round_trip_is_exact(dtype, shape, layout, seed) -> None:
    base = tt.tensor(_data(dtype, base_shape(shape, layout), np.random.default_rng(seed)), dtype=dtype)
    x = apply_layout(base, layout, shape)
    got = _round_trip(x)
    _same(got, x)
    assert got.is_contiguous()
    assert got.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d.is_floating_point])
def test_requires_grad_is_kept(dtype) -> None:
    leaf = tt.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)
    non_leaf = leaf * 2
    got = _round_trip({"leaf": leaf, "non_leaf": non_leaf, "plain": leaf.detach()})
    assert got["leaf"].requires_grad and got["leaf"].is_leaf
    assert got["non_leaf"].requires_grad and got["non_leaf"].is_leaf and got["non_leaf"].tolist() == [2.0, 4.0]
    assert not got["plain"].requires_grad


def test_nested_containers_keep_their_types_and_values() -> None:
    x = tt.arange(6, dtype=tt.int16).reshape(2, 3)
    obj = {
        "state": {0: {"step": tt.tensor(3.0), "buf": x}, 1: {}},
        "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "nesterov": False, "name": None, "params": [0, 1]}],
        "ordered": OrderedDict([("b", 1), ("a", 2)]),
        "counts": Counter([2, 5, 5]),
        (1, "a"): [True, 2**70, -0.0, float("inf"), float("-inf"), 1e-310, "ü", ""],
        None: tt.float16,
        2.5: (),
    }
    got = _round_trip(obj)
    assert list(got) == list(obj)
    assert type(got["ordered"]) is OrderedDict and list(got["ordered"].items()) == [("b", 1), ("a", 2)]
    assert type(got["counts"]) is Counter and got["counts"] == Counter([2, 5, 5])
    values = got[(1, "a")]
    assert values == [True, 2**70, 0.0, float("inf"), float("-inf"), 1e-310, "ü", ""]
    assert [type(v) for v in values] == [type(v) for v in obj[(1, "a")]]
    assert str(values[2]) == "-0.0"
    assert got[None] is tt.float16 and got[2.5] == ()
    assert got["param_groups"] == obj["param_groups"]
    assert type(got["param_groups"][0]["betas"]) is tuple
    _same(got["state"][0]["buf"], x)
    _same(got["state"][0]["step"], obj["state"][0]["step"])
    nan = _round_trip([float("nan")])[0]
    assert type(nan) is float and nan != nan


def test_a_tensor_saved_twice_loads_as_one_tensor() -> None:
    x = tt.ones(3)
    got = _round_trip({"a": x, "b": [x, x[1:]]})
    assert got["a"] is got["b"][0]
    assert got["b"][1] is not got["a"] and got["b"][1].tolist() == [1.0, 1.0]


def test_loaded_tensor_owns_its_memory() -> None:
    x = tt.zeros(3)
    buffer = io.BytesIO()
    tt.save(x, buffer)
    x.fill_(5.0)
    buffer.seek(0)
    got = tt.load(buffer)
    assert got.tolist() == [0.0, 0.0, 0.0]
    got.add_(1)  # writable
    assert got.tolist() == [1.0, 1.0, 1.0]


def test_paths_and_files(tmp_path: Path) -> None:
    obj = {"w": tt.tensor([[1.5, -2.0]]), "n": 7}
    for target in (tmp_path / "a.tt", str(tmp_path / "b")):
        tt.save(obj, target)
        assert Path(target).exists()  # no extension is added
        got = tt.load(target)
        assert got["n"] == 7 and got["w"].tolist() == [[1.5, -2.0]]
        assert tt.load(target, map_location="cpu")["n"] == 7
    with open(tmp_path / "c", "wb") as f:
        tt.save(obj, f)
    with open(tmp_path / "c", "rb") as f:
        assert tt.load(f)["w"].shape == (1, 2)


def test_optimizer_state_dict_round_trip() -> None:
    p = tt.tensor([1.0, 2.0], requires_grad=True)
    opt = tt.optim.Adam([p], amsgrad=True)
    p.grad = tt.tensor([0.5, -0.5])
    opt.step()
    state = opt.state_dict()
    got = _round_trip(state)
    assert got["param_groups"] == state["param_groups"]
    for key, value in state["state"][0].items():
        _same(got["state"][0][key], value)


# ---------------------------------------------------------------------- refusals


Pair = namedtuple("Pair", "a b")


@pytest.mark.parametrize("obj", [object(), np.zeros(2), np.float64(1.0), {1, 2}, print, b"bytes", Pair(1, 2),
                                 torch.zeros(2), [1, [object()]], {tt.ones(1): 1}, {(1, tt.ones(1)): 1},
                                 complex(1, 2), tt.optim])
def test_save_refuses_other_types(obj) -> None:
    with pytest.raises(TypeError, match="^save: "):
        tt.save(obj, io.BytesIO())


def test_save_bad_target() -> None:
    with pytest.raises(TypeError, match="^save: expected a path or a binary file object"):
        tt.save(1, 42)


def _archive(structure, arrays=None) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        if structure is not None:
            archive.writestr("t_tensor/structure.json", structure if isinstance(structure, str) else
                             json.dumps({"format": "t_tensor-save", "version": 1, "object": structure}))
        for name, data in (arrays or {}).items():
            archive.writestr(f"t_tensor/tensors/{name}.npy", data)
    buffer.seek(0)
    return buffer


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=allow_pickle)
    return out.getvalue()


class _Boom:
    """Unpickling this would run code: loading must never do that."""

    def __reduce__(self):
        return (exec, ("raise SystemExit('code from a file ran')",))


TENSOR = {"tensor": 0, "dtype": "float32", "shape": [2], "requires_grad": False}
BAD_FILES = {
    "not a zip": io.BytesIO(b"not a zip file at all"),
    "a pickle": io.BytesIO(pickle.dumps(_Boom())),
    "no structure": _archive(None),
    "bad json": _archive("{not json"),
    "other format": _archive(json.dumps({"format": "pickle", "version": 1, "object": 1})),
    "other version": _archive(json.dumps({"format": "t_tensor-save", "version": 99, "object": 1})),
    "unknown tag": _archive({"__reduce__": ["os.system", ["echo hi"]]}),
    "two tags": _archive({"list": [], "tuple": []}),
    "bad float": _archive({"float": "1e5"}),
    "bad dict": _archive({"dict": [[1, 2, 3]]}),
    "list key": _archive({"dict": [[{"list": []}, 1]]}),
    "tensor key": _archive({"dict": [[TENSOR, 1]]}, {0: _npy(np.zeros(2, np.float32))}),
    "missing data": _archive(TENSOR),
    "wrong dtype": _archive(TENSOR, {0: _npy(np.zeros(2, np.float64))}),
    "wrong shape": _archive(TENSOR, {0: _npy(np.zeros(3, np.float32))}),
    "big endian": _archive(TENSOR, {0: _npy(np.zeros(2, ">f4"))}),
    "object array": _archive(dict(TENSOR, dtype="float32"), {0: _npy(np.array([_Boom(), 1], dtype=object), True)}),
    "truncated data": _archive(TENSOR, {0: _npy(np.zeros(2, np.float32))[:-3]}),
    "bad tensor entry": _archive(dict(TENSOR, extra=1)),
    "bad dtype": _archive(dict(TENSOR, dtype="complex64")),
    "dtype alias": _archive(dict(TENSOR, dtype="float")),
    "bad dtype value": _archive({"dtype": "object"}),
    "deep nesting": _archive(json.dumps({"format": "t_tensor-save", "version": 1, "object": 1})
                             .replace('"object": 1', '"object": ' + '{"list": [' * 5000 + "]}" * 5000)),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_load_refuses_bad_files(name: str) -> None:
    f = BAD_FILES[name]
    f.seek(0)
    with pytest.raises(ValueError, match="^load: "):
        tt.load(f)


def test_torch_files_are_refused() -> None:
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    buffer.seek(0)
    with pytest.raises(ValueError, match="^load: not a file written by t_tensor.save"):
        tt.load(buffer)


def test_load_options() -> None:
    buffer = io.BytesIO()
    tt.save(1, buffer)
    buffer.seek(0)
    with pytest.raises(ValueError, match="^load: weights_only=False"):
        tt.load(buffer, weights_only=False)
    with pytest.raises(RuntimeError, match="^load: only the 'cpu' device"):
        tt.load(buffer, map_location="cuda")
    with pytest.raises(TypeError, match="^load: expected a path or a binary file object"):
        tt.load(3.5)

"""Module, Parameter and the containers against torch.nn: registration, iteration order and names,
state_dict / load_state_dict (keys, errors, strict=False), train/eval, zero_grad, to(dtype),
apply, repr."""

from __future__ import annotations

import gc
from collections import OrderedDict

import numpy as np
import pytest
import torch

import t_tensor as tt
from t_tensor.nn.parameter import _REGISTRY

# ---------------------------------------------------------------------- Parameter


def test_parameter_is_a_registered_leaf_over_the_same_memory() -> None:
    data = tt.ones(2, 3)
    p = tt.nn.Parameter(data)
    assert isinstance(p, tt.nn.Parameter) and isinstance(p, tt.Tensor)
    assert issubclass(tt.nn.Parameter, tt.Tensor)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == data.data_ptr() and not data.requires_grad
    assert not isinstance(data, tt.nn.Parameter)
    for derived in (p * 2, p.detach(), p.clone(), p[0], p.data):
        assert not isinstance(derived, tt.nn.Parameter)
    frozen = tt.nn.Parameter(tt.zeros(2), requires_grad=False)
    assert isinstance(frozen, tt.nn.Parameter) and not frozen.requires_grad
    assert tt.nn.Parameter().shape == (0,)
    assert not isinstance(tt.zeros(1), tt.nn.Parameter) and not isinstance(3, tt.nn.Parameter)


def test_parameter_of_a_non_leaf_is_a_fresh_leaf() -> None:
    x = tt.ones(2, requires_grad=True)
    p = tt.nn.Parameter(x * 3)
    assert p.is_leaf and p.requires_grad
    (p * p).sum().backward()
    assert p.grad.tolist() == [6.0, 6.0] and x.grad is None


def test_parameter_errors() -> None:
    with pytest.raises(RuntimeError, match="^Parameter: only Tensors of floating point"):
        tt.nn.Parameter(tt.zeros(2, dtype=tt.int64))
    with pytest.raises(TypeError, match="^Parameter: data must be a Tensor"):
        tt.nn.Parameter(np.zeros(2))
    assert tt.nn.Parameter(tt.zeros(2, dtype=tt.int64), requires_grad=False).dtype == tt.int64


def test_parameter_registry_forgets_dead_parameters() -> None:
    gc.collect()
    before = len(_REGISTRY)
    params = [tt.nn.Parameter(tt.zeros(3)) for _ in range(5)]
    assert len(_REGISTRY) == before + 5
    del params
    gc.collect()
    assert len(_REGISTRY) == before


# ---------------------------------------------------------------------- registration


class Block(tt.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = tt.nn.Linear(3, 4)
        self.scale = tt.nn.Parameter(tt.ones(4))
        self.register_buffer("steps", tt.zeros((), dtype=tt.int64))
        self.register_buffer("scratch", tt.zeros(2), persistent=False)
        self.plain = tt.ones(1)  # an ordinary attribute: neither parameter nor buffer

    def forward(self, x):
        self.steps += 1
        return self.fc(x) * self.scale


class TorchBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)
        self.scale = torch.nn.Parameter(torch.ones(4))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)
        self.plain = torch.ones(1)

    def forward(self, x):
        self.steps += 1
        return self.fc(x) * self.scale


class Net(tt.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = Block()
        self.layers = tt.nn.ModuleList([tt.nn.Linear(4, 4), tt.nn.ReLU(), tt.nn.Linear(4, 2)])
        self.heads = tt.nn.ModuleDict({"a": tt.nn.Linear(2, 1), "b": tt.nn.Identity()})
        self.shared = self.layers[0]  # the same module twice: listed once

    def forward(self, x):
        x = self.first(x)
        for layer in self.layers:
            x = layer(x)
        return self.heads["a"](x)


class TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = TorchBlock()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 1), "b": torch.nn.Identity()})
        self.shared = self.layers[0]

    def forward(self, x):
        x = self.first(x)
        for layer in self.layers:
            x = layer(x)
        return self.heads["a"](x)


def _load_from_torch(module: tt.nn.Module, reference: torch.nn.Module) -> None:
    module.load_state_dict({k: v.detach().numpy() for k, v in reference.state_dict().items()})


def test_names_and_iteration_order_match_torch() -> None:
    net, ref = Net(), TorchNet()
    assert [n for n, _ in net.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert [n for n, _ in net.named_buffers()] == [n for n, _ in ref.named_buffers()]
    assert [n for n, _ in net.named_modules()] == [n for n, _ in ref.named_modules()]
    assert [n for n, _ in net.named_children()] == [n for n, _ in ref.named_children()]
    assert [n for n, _ in net.named_parameters(prefix="m", recurse=True)] == [
        n for n, _ in ref.named_parameters(prefix="m")]
    assert [n for n, _ in net.first.named_parameters(recurse=False)] == ["scale"]
    assert len(list(net.parameters())) == len(list(ref.parameters()))
    assert len(list(net.modules())) == len(list(ref.modules()))
    want = [type(m).__name__.removeprefix("Torch") for m in ref.children()]
    assert [type(m).__name__ for m in net.children()] == want
    assert list(net.state_dict()) == list(ref.state_dict())
    assert net.get_submodule("layers.2") is net.layers[2]
    with pytest.raises(AttributeError):
        net.get_submodule("layers.9")


def test_shared_parameter_listed_once() -> None:
    a = tt.nn.Linear(2, 2)
    b = tt.nn.Linear(2, 2)
    b.weight = a.weight
    holder = tt.nn.Sequential(a, b)
    assert [n for n, _ in holder.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    assert len(list(holder.named_parameters(remove_duplicate=False))) == 4


def test_setattr_registers_and_replaces() -> None:
    m = tt.nn.Module()
    m.w = tt.nn.Parameter(tt.ones(2))
    assert list(m._parameters) == ["w"] and "w" not in m.__dict__
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = tt.ones(2)
    m.w = None
    assert m.w is None and list(m.parameters()) == []
    m.sub = tt.nn.Linear(1, 1)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 3
    m.register_buffer("buf", tt.zeros(1))
    m.buf = tt.ones(1)
    assert m._buffers["buf"].tolist() == [1.0]
    with pytest.raises(TypeError, match="as buffer 'buf'"):
        m.buf = 2.0
    m.sub2 = tt.nn.ReLU()
    m.sub2 = tt.nn.Parameter(tt.ones(1))  # a parameter replaces a module of that name
    assert "sub2" not in m._modules and "sub2" in m._parameters
    del m.sub2
    assert "sub2" not in m._parameters
    with pytest.raises(AttributeError):
        _ = m.sub2
    assert "buf" in dir(m)


def test_registration_errors_match_torch() -> None:
    class Early(tt.nn.Module):
        def __init__(self) -> None:
            self.w = tt.nn.Parameter(tt.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    m = tt.nn.Module()
    with pytest.raises(KeyError, match="name can.+t contain"):
        m.register_buffer("a.b", tt.zeros(1))
    with pytest.raises(KeyError, match="name can.+t be empty"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="^register_parameter: cannot assign 'Tensor'"):
        m.register_parameter("w", tt.ones(1))
    with pytest.raises(TypeError, match="^register_buffer: cannot assign 'list'"):
        m.register_buffer("b", [1])
    m.attr = 1
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("attr", tt.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", tt.zeros(1))
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        m(tt.ones(1))


# ---------------------------------------------------------------------- forward, state_dict


def test_forward_matches_torch_after_loading_its_state_dict() -> None:
    ref = TorchNet()
    net = Net()
    _load_from_torch(net, ref)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    got = net(tt.tensor(x))
    want = ref(torch.tensor(x))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    got.sum().backward()
    want.sum().backward()
    grads = dict(ref.named_parameters())
    for name, p in net.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    assert net.first.steps.item() == 1  # the buffer updated by forward


def test_state_dict_is_detached_and_shares_memory() -> None:
    lin = tt.nn.Linear(2, 3)
    sd = lin.state_dict()
    assert list(sd) == ["weight", "bias"]
    assert not sd["weight"].requires_grad and not isinstance(sd["weight"], tt.nn.Parameter)
    assert sd["weight"].data_ptr() == lin.weight.data_ptr()
    kept = lin.state_dict(keep_vars=True)
    assert kept["weight"] is lin.weight
    assert "scratch" not in Block().state_dict()


def test_load_state_dict_copies_in_place_from_tensors_and_arrays() -> None:
    a, b = Net(), Net()
    weight = b.first.fc.weight
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.first.fc.weight is weight and weight.requires_grad and weight.is_leaf
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy()), name
    b.load_state_dict({k: np.full(v.shape, 2.0, dtype=v.numpy().dtype) for k, v in a.state_dict().items()})
    assert b.layers[2].bias.tolist() == [2.0, 2.0]


def test_load_state_dict_missing_and_unexpected_keys_as_torch() -> None:
    net, ref = Net(), TorchNet()
    sd = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    del sd["first.fc.bias"]
    sd["extra.weight"] = np.zeros(1, dtype=np.float32)
    with pytest.raises(RuntimeError) as got:
        net.load_state_dict(sd)
    with pytest.raises(RuntimeError) as want:
        ref.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})
    assert str(got.value).startswith("Error(s) in loading state_dict for Net:")
    for line in ('Missing key(s) in state_dict: "first.fc.bias".', 'Unexpected key(s) in state_dict: "extra.weight".'):
        assert line in str(got.value) and line in str(want.value)
    got_keys = net.load_state_dict(sd, strict=False)
    want_keys = ref.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()}, strict=False)
    assert got_keys.missing_keys == want_keys.missing_keys
    assert got_keys.unexpected_keys == want_keys.unexpected_keys


def test_load_state_dict_shape_mismatch_is_an_error_even_when_not_strict() -> None:
    lin = tt.nn.Linear(3, 2)
    before = lin.weight.numpy().copy()
    for strict in (True, False):
        with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape \(3, 3\)"):
            lin.load_state_dict({"weight": np.zeros((3, 3), np.float32), "bias": np.zeros(2, np.float32)},
                                strict=strict)
    assert np.array_equal(lin.weight.numpy(), before)
    with pytest.raises(TypeError, match="^load_state_dict: expected a mapping"):
        lin.load_state_dict([1, 2])
    with pytest.raises(RuntimeError, match="expected a Tensor or a NumPy array"):
        lin.load_state_dict({"weight": [[0.0] * 3] * 2, "bias": np.zeros(2, np.float32)})


def test_load_state_dict_converts_dtype_and_assign() -> None:
    lin = tt.nn.Linear(2, 2)
    lin.load_state_dict({"weight": np.ones((2, 2)), "bias": np.zeros(2)})  # float64 into float32
    assert lin.weight.dtype == tt.float32 and lin.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    new = tt.full((2, 2), 3.0)
    lin.load_state_dict({"weight": new, "bias": tt.zeros(2)}, assign=True)
    assert isinstance(lin.weight, tt.nn.Parameter) and lin.weight.data_ptr() == new.data_ptr()


# ---------------------------------------------------------------------- modes and conversions


def test_train_eval_propagate() -> None:
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.layers.train(False)
    assert net.training and not net.layers[0].training
    with pytest.raises(ValueError, match="boolean"):
        net.train(1)

    class Frozen(tt.nn.Linear):
        def train(self, mode: bool = True):  # a layer that stays in eval mode, whatever its parent says
            return super().train(False)

    holder = tt.nn.Sequential(Frozen(1, 1), tt.nn.Dropout())
    holder.train()
    assert holder.training and not holder[0].training and holder[1].training


def test_zero_grad() -> None:
    lin = tt.nn.Linear(2, 2)
    lin(tt.ones(1, 2)).sum().backward()
    grad = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is grad and lin.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None
    lin.zero_grad()  # nothing to reset: fine


def test_to_dtype_keeps_parameter_objects_and_backward_works() -> None:
    block = Block()
    weight = block.fc.weight
    block(tt.ones(1, 3)).sum().backward()
    assert block.to(tt.float64) is block
    assert block.fc.weight is weight and isinstance(weight, tt.nn.Parameter)
    assert weight.dtype == tt.float64 and weight.grad.dtype == tt.float64
    assert block.steps.dtype == tt.int64 and block.scratch.dtype == tt.float64
    block.zero_grad()
    out = block(tt.ones(1, 3, dtype=tt.float64))
    assert out.dtype == tt.float64
    out.sum().backward()
    assert weight.grad.dtype == tt.float64 and weight.grad.shape == (4, 3)
    assert block.float().fc.bias.dtype == tt.float32
    assert block.half().fc.bias.dtype == tt.float16
    assert block.double().to("cpu").fc.bias.dtype == tt.float64
    with pytest.raises(TypeError, match="floating point"):
        block.to(tt.int32)
    with pytest.raises(RuntimeError, match="only the 'cpu' device"):
        block.to("cuda")


def test_requires_grad_and_apply_order() -> None:
    net, ref = Net(), TorchNet()
    seen, want = [], []
    net.apply(lambda m: seen.append(type(m).__name__))
    ref.apply(lambda m: want.append(type(m).__name__))
    assert [s.replace("Block", "TorchBlock").replace("Net", "TorchNet") for s in seen] == want
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_repr_matches_torch() -> None:
    def build(nn):
        return nn.Sequential(OrderedDict([
            ("embed", nn.Embedding(10, 4, padding_idx=0)),
            ("body", nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Dropout(0.1), nn.Linear(8, 4, bias=False))),
            ("norm", nn.LayerNorm(4)),
            ("norm2", nn.LayerNorm((2, 3), eps=1e-3, bias=False)),
            ("norm3", nn.LayerNorm(4, elementwise_affine=False)),
            ("heads", nn.ModuleList([nn.Linear(4, 2), nn.Softmax(dim=-1)])),
            ("extra", nn.ModuleDict({"flat": nn.Flatten(), "id": nn.Identity(), "act": nn.ReLU(), "t": nn.Tanh(),
                                     "s": nn.Sigmoid(), "silu": nn.SiLU(), "ls": nn.LogSoftmax(1),
                                     "g": nn.GELU(approximate="tanh"), "r": nn.ReLU(inplace=True)})),
            ("loss", nn.CrossEntropyLoss()),
        ]))

    assert repr(build(tt.nn)) == repr(build(torch.nn))
    assert repr(tt.nn.Module()) == "Module()"


# ---------------------------------------------------------------------- containers


def test_sequential_behaves_as_torch() -> None:
    mods = lambda nn: [nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)]  # noqa: E731
    seq, ref = tt.nn.Sequential(*mods(tt.nn)), torch.nn.Sequential(*mods(torch.nn))
    _load_from_torch(seq, ref)
    x = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    np.testing.assert_allclose(seq(tt.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert len(seq) == 3 and isinstance(seq[-1], tt.nn.Linear)
    assert [type(m).__name__ for m in seq[1:]] == ["ReLU", "Linear"] and isinstance(seq[1:], tt.nn.Sequential)
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear"]
    with pytest.raises(IndexError):
        seq[3]
    del seq[0]
    del ref[0]
    assert list(seq._modules) == list(ref._modules)
    seq.append(tt.nn.Tanh())
    ref.append(torch.nn.Tanh())
    seq.insert(0, tt.nn.Identity())
    ref.insert(0, torch.nn.Identity())
    assert list(seq.state_dict()) == list(ref.state_dict())
    assert [type(m).__name__ for m in seq] == [type(m).__name__ for m in ref]
    seq[0] = tt.nn.Sigmoid()
    assert isinstance(seq[0], tt.nn.Sigmoid)
    empty = tt.nn.Sequential()
    x = tt.ones(2)
    assert empty(x) is x


def test_module_list_and_dict_behave_as_torch() -> None:
    layers = tt.nn.ModuleList([tt.nn.Linear(2, 2), tt.nn.Linear(2, 2)])
    ref = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)])
    layers.append(tt.nn.ReLU())
    ref.append(torch.nn.ReLU())
    layers.extend([tt.nn.Linear(2, 1)])
    ref.extend([torch.nn.Linear(2, 1)])
    layers.insert(1, tt.nn.Tanh())
    ref.insert(1, torch.nn.Tanh())
    del layers[0]
    del ref[0]
    assert list(layers.state_dict()) == list(ref.state_dict())
    assert [type(m).__name__ for m in layers] == [type(m).__name__ for m in ref]
    assert len(layers[1:3]) == 2 and isinstance(layers[-1], tt.nn.Linear)
    layers += [tt.nn.Identity()]
    assert len(layers) == 5
    with pytest.raises(TypeError, match="iterable"):
        layers.extend(tt.nn.ReLU())
    with pytest.raises(NotImplementedError):
        layers(tt.ones(1))
    heads = tt.nn.ModuleDict([("b", tt.nn.Linear(1, 1)), ("a", tt.nn.ReLU())])
    heads["c"] = tt.nn.Linear(1, 2)
    assert list(heads) == ["b", "a", "c"] and "a" in heads and len(heads) == 3
    assert [n for n, _ in heads.named_parameters()] == ["b.weight", "b.bias", "c.weight", "c.bias"]
    assert isinstance(heads.pop("a"), tt.nn.ReLU) and list(heads.keys()) == ["b", "c"]
    heads.update({"d": tt.nn.Identity()})
    assert [k for k, _ in heads.items()] == ["b", "c", "d"] and len(list(heads.values())) == 3
    heads.clear()
    assert len(heads) == 0
    with pytest.raises(ValueError, match="pair"):
        heads.update([1])


def test_deepcopy_clones_tensors_and_keeps_sharing() -> None:
    import copy

    net = Net()
    net.layers[0].weight.requires_grad_(False)
    net(tt.ones(2, 3)).sum().backward()
    twin = copy.deepcopy(net)
    assert list(twin.state_dict()) == list(net.state_dict())
    for (name, p), q in zip(net.named_parameters(), twin.parameters(), strict=True):
        assert isinstance(q, tt.nn.Parameter) and q.is_leaf and q.requires_grad == p.requires_grad, name
        assert q.data_ptr() != p.data_ptr() and np.array_equal(q.detach().numpy(), p.detach().numpy()), name
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            assert q.grad.data_ptr() != p.grad.data_ptr() and np.array_equal(q.grad.numpy(), p.grad.numpy())
    assert twin.shared is twin.layers[0] and twin.shared is not net.shared
    assert twin.first.steps.item() == net.first.steps.item() and twin.first.plain is not net.first.plain
    x = tt.ones(2, 3)
    np.testing.assert_array_equal(twin(x).detach().numpy(), net(x).detach().numpy())
    with tt.no_grad():
        twin.first.fc.weight.fill_(0.0)
    assert net.first.fc.weight.abs().sum().item() > 0


def test_training_steps_match_torch() -> None:
    """A few steps of plain SGD (written by hand, under no_grad) on the same model and data give
    torch's parameters: forward, losses, backward, zero_grad and in-place updates together."""

    def build(nn):
        return nn.Sequential(nn.Embedding(7, 4, padding_idx=0), nn.Flatten(), nn.Linear(8, 6), nn.LayerNorm(6),
                             nn.GELU(), nn.Linear(6, 3))

    model, ref = build(tt.nn), build(torch.nn)
    _load_from_torch(model, ref)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 7, (16, 2))
    labels = rng.integers(0, 3, 16)
    for _ in range(5):
        for m, lib, grad_ctx in ((model, tt, tt.no_grad), (ref, torch, torch.no_grad)):
            m.zero_grad()
            F = tt.nn.functional if lib is tt else torch.nn.functional
            loss = F.cross_entropy(m(lib.tensor(tokens)), lib.tensor(labels), label_smoothing=0.1)
            loss.backward()
            with grad_ctx():
                for p in m.parameters():
                    p -= 0.5 * p.grad
    want = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.detach().numpy(), want[name].detach().numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
        assert p.is_leaf and isinstance(p, tt.nn.Parameter)
    assert not np.any(model[0].weight.detach().numpy()[0])  # the padding row never moved

"""A short tour of t_tensor: ``python -m t_tensor``.

It prints, section by section, what the library does with memory: tensors made in several
ways, views that share one storage (and the storage's use count as views come and go), a write
through a view, ``reshape`` copying where ``view`` would fail, zero-copy exchange with NumPy and
through DLPack, and the caching allocator's counters; then the operations, autograd (a graph
printed and differentiated) and a short training run of ``examples/train_digits.py``. Every line
is computed when the tour runs.

Each section is a function that takes no argument and prints; :func:`main` runs them in order.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import t_tensor as tt


def heading(title: str) -> None:
    print()
    print(title)
    print("-" * len(title))


def show(label: str, value: object) -> None:
    """Print ``label`` and ``value`` on one line, or ``value`` below the label if it spans lines."""
    text = str(value)
    if "\n" in text:
        print(f"{label}:")
        for line in text.splitlines():
            print(f"    {line}")
    else:
        print(f"{label:<44} {text}")


def layout(t: tt.Tensor) -> str:
    return f"shape={t.shape} stride={t.stride()} storage_offset={t.storage_offset()}"


def creating_tensors() -> None:
    heading("1. Creating tensors")
    show("tt.tensor([[1, 2], [3, 4]])", tt.tensor([[1, 2], [3, 4]]))
    show("tt.zeros(2, 3, dtype=tt.float64)", tt.zeros(2, 3, dtype=tt.float64))
    show("tt.arange(5)", tt.arange(5))
    tt.manual_seed(0)
    show("tt.manual_seed(0); tt.rand(3)", tt.rand(3))
    tt.manual_seed(0)
    show("same seed, same numbers", tt.rand(3))


def views_share_storage() -> None:
    heading("2. Views share one storage")
    x = tt.arange(12).view(3, 4)
    storage = x.untyped_storage()
    show("x = tt.arange(12).view(3, 4)", layout(x))
    show("x.untyped_storage().use_count()", storage.use_count())
    y = x.T
    show("y = x.T", layout(y))
    z = x[1:, ::2]
    show("z = x[1:, ::2]", layout(z))
    show("use_count() with y and z alive", storage.use_count())
    show("z.data_ptr() == x.data_ptr() + 4 * 8", z.data_ptr() == x.data_ptr() + 4 * x.itemsize)
    del y, z
    show("use_count() after del y, z", storage.use_count())


def write_through_view() -> None:
    heading("3. A write through a view is seen in the base")
    x = tt.zeros(3, 4, dtype=tt.int64)
    column = x[:, 1]
    column.fill_(7)
    x[2, ::2] = 5
    show("x after x[:, 1].fill_(7) and x[2, ::2] = 5", x)


def reshape_versus_view() -> None:
    heading("4. reshape copies only when it must; view never copies")
    x = tt.arange(6).view(2, 3)
    show("x.reshape(3, 2) shares x's storage", x.reshape(3, 2).is_shared_with(x))
    xt = x.T
    show("x.T.is_contiguous()", xt.is_contiguous())
    flat = xt.reshape(6)
    show("x.T.reshape(6) shares x's storage", flat.is_shared_with(x))
    show("x.T.reshape(6)", flat)
    try:
        xt.view(6)
    except RuntimeError as error:
        show("x.T.view(6) raises RuntimeError", str(error).split(" (")[0])


def numpy_round_trip() -> None:
    heading("5. NumPy: zero-copy both ways")
    x = tt.zeros(2, 3)
    a = x.numpy()
    a[0, 0] = 42.0
    show("a = x.numpy(); a[0, 0] = 42 -> x[0, 0]", x[0, 0].item())
    show("a.ctypes.data == x.data_ptr()", a.ctypes.data == x.data_ptr())
    n = np.arange(4.0)
    t = tt.from_numpy(n)
    t[1] = -1.0
    show("t = tt.from_numpy(n); t[1] = -1 -> n", n)
    show("t.untyped_storage().allocator", t.untyped_storage().allocator)


def dlpack_exchange() -> None:
    heading("6. DLPack: t_tensor -> NumPy and back")
    x = tt.arange(4, dtype=tt.float32)
    storage = x.untyped_storage()
    d = np.from_dlpack(x)
    show("d = np.from_dlpack(x)", d)
    show("d.ctypes.data == x.data_ptr()", d.ctypes.data == x.data_ptr())
    show("use_count() while d holds the export", storage.use_count())
    del d
    show("use_count() after del d", storage.use_count())
    back = tt.from_dlpack(np.ones(3, dtype=np.float32))
    show("tt.from_dlpack(np.ones(3, dtype=np.float32))", back)


def memory_statistics() -> None:
    heading("7. The caching allocator")
    before = tt.memory_allocated()
    x = tt.empty(1000)
    show("tt.empty(1000) (4000 bytes) adds to allocated", tt.memory_allocated() - before)
    del x
    show("after del x, allocated is back to", tt.memory_allocated() - before)
    stats = tt.memory_stats()
    for key in (
        "allocated_bytes.current",
        "reserved_bytes.current",
        "active_blocks.current",
        "cached_blocks.current",
        "cache_hits",
        "cache_misses",
    ):
        print(f"    {key:<28} {stats[key]:>10,}")
    show("tt.empty_cache() released bytes", tt.empty_cache())


def elementwise_arithmetic() -> None:
    heading("8. Elementwise operations: broadcasting and type promotion")
    col, row = tt.tensor([[1], [2], [3]]), tt.tensor([10, 20])
    show("(3, 1) + (2,) broadcasts to", (col + row).shape)
    small = tt.tensor([1, 2, 3], dtype=tt.int8)
    show("int8 + 1000 stays int8 and wraps", (small + 1000).tolist())
    show("int8 / 2 is a float", (small / 2).tolist())
    show("[7, -7] // 2, [7, -7] % 3", ((tt.tensor([7, -7]) // 2).tolist(), (tt.tensor([7, -7]) % 3).tolist()))
    x = tt.linspace(-2, 2, 5)
    show("tt.sigmoid(x) > 0.5", (tt.sigmoid(x) > 0.5).tolist())
    before = x.data_ptr()
    x *= 2
    show("x *= 2 writes in place", x.data_ptr() == before)


def reductions_indexing_linalg() -> None:
    heading("9. Reductions, indexing, sorting and matrix products")
    x = tt.arange(12, dtype=tt.float32).view(3, 4)
    show("x.sum(dim=0), x.mean()", (x.sum(dim=0).tolist(), x.mean().item()))
    show("tt.softmax(x, -1).sum(-1)", tt.softmax(x, -1).sum(-1).tolist())
    show("x[[2, 0], 1:3] (advanced indexing copies)", x[[2, 0], 1:3].tolist())
    show("x[x > 8]", x[x > 8].tolist())
    values, indices = tt.sort(tt.tensor([3, 1, 2]))
    show("tt.sort([3, 1, 2])", (values.tolist(), indices.tolist()))
    show("(x @ x.T).shape, tt.einsum('ij,ij->i', x, x)", ((x @ x.T).shape, tt.einsum("ij,ij->i", x, x).tolist()))
    show("tt.cat([x, x]).shape, tt.stack([x, x]).shape", (tt.cat([x, x]).shape, tt.stack([x, x]).shape))


def autograd_graph() -> None:
    heading("10. Autograd: record, then run the record backwards")
    w = tt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = tt.tensor([1.0, 0.5])
    loss = ((w @ x).tanh() ** 2).sum()
    show("loss", loss)
    print(tt.autograd.inspect.describe(loss))
    loss.backward()
    show("w.grad", [[round(v, 4) for v in row] for row in w.grad.tolist()])
    (first,) = tt.autograd.grad(x.requires_grad_() ** 3, x, tt.ones(2), create_graph=True)
    show("d(x^3)/dx and its derivative", (first.tolist(), tt.autograd.grad(first.sum(), x)[0].tolist()))


def training_digits() -> None:
    heading("11. Training: an MLP on scikit-learn's digits (examples/train_digits.py, short)")
    example = Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"
    if not example.exists():
        print(f"examples/train_digits.py is not beside this installation ({example}); run the tour from a checkout")
        return
    spec = importlib.util.spec_from_file_location("train_digits", example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    accuracy = module.train("mlp", epochs=5, progress=False)["mlp"]
    show("test accuracy after 5 epochs", f"{accuracy:.3f} (30 epochs: > 0.97; see the example)")


def compiled_graph() -> None:
    heading("12. tt.compile: trace, optimize, plan every intermediate in one arena")
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(64, 128), tt.nn.ReLU(), tt.nn.Linear(128, 10))
    x = tt.randn(32, 64)
    traced = tt.compile(model, (x,))
    compiled = tt.compile(model, (x,), arena=True, optimize=True)
    ops = ", ".join(sorted({node.op_type for node in compiled.graph.nodes}))
    show("nodes traced -> optimized", f"{len(traced.graph.nodes)} -> {len(compiled.graph.nodes)} ({ops})")
    with tt.no_grad():
        same = tt.allclose(compiled(x), model(x), atol=1e-5)
    show("compiled(x) matches model(x)", same)


def main() -> None:
    print(f"t_tensor {tt.__version__}: a tour of storage, views, memory and operations")
    for section in (
        creating_tensors,
        views_share_storage,
        write_through_view,
        reshape_versus_view,
        numpy_round_trip,
        dlpack_exchange,
        memory_statistics,
        elementwise_arithmetic,
        reductions_indexing_linalg,
        autograd_graph,
        training_digits,
        compiled_graph,
    ):
        section()


if __name__ == "__main__":
    main()

"""``python -m t_tensor`` runs the tour: it must exit cleanly and print what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEADINGS = [
    "1. Creating tensors",
    "2. Views share one storage",
    "3. A write through a view is seen in the base",
    "4. reshape copies only when it must; view never copies",
    "5. NumPy: zero-copy both ways",
    "6. DLPack: t_tensor -> NumPy and back",
    "7. The caching allocator",
    "9. Reductions, indexing, sorting and matrix products",
    "10. Autograd: record, then run the record backwards",
    "11. Training: an MLP on scikit-learn's digits (examples/train_digits.py, short)",
    "12. tt.compile: trace, optimize, plan every intermediate in one arena",
]

# (label, value) pairs the tour prints on one line; the value is what the library must produce.
KEY_LINES = [
    ("nodes traced -> optimized", "7 -> 2 (FusedGemm, Gemm)"),
    ("compiled(x) matches model(x)", "True"),
    ("w.grad", "[[0.1362, 0.0681], [0.0004, 0.0002]]"),
    ("d(x^3)/dx and its derivative", "([3.0, 0.75], [6.0, 3.0])"),
    ("x = tt.arange(12).view(3, 4)", "shape=(3, 4) stride=(4, 1) storage_offset=0"),
    ("x.untyped_storage().use_count()", "1"),
    ("y = x.T", "shape=(4, 3) stride=(1, 4) storage_offset=0"),
    ("z = x[1:, ::2]", "shape=(2, 2) stride=(4, 2) storage_offset=4"),
    ("use_count() with y and z alive", "3"),
    ("z.data_ptr() == x.data_ptr() + 4 * 8", "True"),
    ("use_count() after del y, z", "1"),
    ("x.reshape(3, 2) shares x's storage", "True"),
    ("x.T.reshape(6) shares x's storage", "False"),
    ("a = x.numpy(); a[0, 0] = 42 -> x[0, 0]", "42.0"),
    ("a.ctypes.data == x.data_ptr()", "True"),
    ("t.untyped_storage().allocator", "external"),
    ("d.ctypes.data == x.data_ptr()", "True"),
    ("use_count() while d holds the export", "2"),
    ("use_count() after del d", "1"),
    ("tt.empty(1000) (4000 bytes) adds to allocated", "4096"),
    ("after del x, allocated is back to", "0"),
    ("x.sum(dim=0), x.mean()", "([12.0, 15.0, 18.0, 21.0], 5.5)"),
    ("x[x > 8]", "[9.0, 10.0, 11.0]"),
    ("tt.sort([3, 1, 2])", "([1, 2, 3], [1, 2, 0])"),
]


@pytest.fixture(scope="module")
def tour() -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "t_tensor"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_tour_exits_cleanly(tour: subprocess.CompletedProcess) -> None:
    assert tour.returncode == 0, tour.stderr
    assert tour.stderr == "", tour.stderr
    # short: a screen or two (it grew from 99 to 104 lines with section 12, the graph compiler)
    assert len(tour.stdout.splitlines()) < 110


@pytest.mark.parametrize("heading", HEADINGS)
def test_tour_heading(tour: subprocess.CompletedProcess, heading: str) -> None:
    lines = tour.stdout.splitlines()
    assert heading in lines
    assert lines[lines.index(heading) + 1] == "-" * len(heading)


@pytest.mark.parametrize(("label", "value"), KEY_LINES, ids=[label for label, _ in KEY_LINES])
def test_tour_key_line(tour: subprocess.CompletedProcess, label: str, value: str) -> None:
    found = [line for line in tour.stdout.splitlines() if line.startswith(label)]
    assert found, f"no line starting with {label!r}"
    assert found[0][len(label) :].strip() == value


def test_tour_seed_repeats(tour: subprocess.CompletedProcess) -> None:
    values = {}
    for line in tour.stdout.splitlines():
        for label in ("tt.manual_seed(0); tt.rand(3)", "same seed, same numbers"):
            if line.startswith(label):
                values[label] = line[len(label) :].strip()
    assert len(values) == 2 and len(set(values.values())) == 1, values

"""examples/train_digits.py reaches the issue's bar: at least 97% test accuracy on the digits,
for the MLP and for the small CNN, with the example's own settings (seeded, so repeatable)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_reaches_97_percent(example, model: str) -> None:
    accuracy = example.train(model, progress=False)[model]
    assert accuracy >= 0.97, f"{model}: test accuracy {accuracy:.4f}"


def test_split_is_disjoint_and_complete(example) -> None:
    x_train, y_train, x_test, y_test = example.load_digits_split()
    assert x_train.shape[1:] == (1, 8, 8) and len(x_train) + len(x_test) == 1797
    assert 0.0 <= x_train.min() and x_train.max() <= 1.0

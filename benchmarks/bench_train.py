"""Training-step benchmark: one forward + backward + optimizer step of the issue's MLP
(batch 256, 784-512-512-10) and of the digits CNN (batch 64, 1x8x8), t_tensor beside PyTorch with
identical weights and data, in one run.

Before timing, the two libraries take one step from the same weights and must agree on the loss
and the updated weights (so a wrong backward is never timed). Both use the same number of
threads. Run by hand: ``python benchmarks/bench_train.py [--threads N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import median_seconds  # noqa: E402 - the shared timing

import t_tensor as tt  # noqa: E402
from examples.train_digits import SmallCNN  # noqa: E402


def mlp_pair() -> tuple:
    layers = [(784, 512), (512, 512), (512, 10)]

    def build(lib):
        mods = []
        for i, (n_in, n_out) in enumerate(layers):
            mods.append(lib.nn.Linear(n_in, n_out))
            if i < len(layers) - 1:
                mods.append(lib.nn.ReLU())
        return lib.nn.Sequential(*mods)

    return build(tt), build(torch)


def cnn_pair() -> tuple:
    torch_model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Dropout(0.0), torch.nn.Linear(32 * 2 * 2, 10),
    )
    model = SmallCNN()
    model.classifier[1].p = 0.0  # no dropout: the two libraries must compute the same thing
    return model, torch_model


def copy_weights(tt_model, torch_model) -> None:
    state = {k: v.detach().numpy() for k, v in torch_model.state_dict().items()}
    tt_state = tt_model.state_dict()
    assert len(state) == len(tt_state), (list(state), list(tt_state))
    tt_model.load_state_dict(dict(zip(tt_state, state.values(), strict=True)))


def step_fn(lib, model, x, y):
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.functional.cross_entropy

    def step() -> float:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def bench(name: str, pair: tuple, x: np.ndarray, y: np.ndarray, repeat: int) -> None:
    tt_model, torch_model = pair
    copy_weights(tt_model, torch_model)
    x_tt, y_tt = tt.tensor(x), tt.tensor(y)
    x_t, y_t = torch.tensor(x), torch.tensor(y)
    tt_step = step_fn(tt, tt_model, x_tt, y_tt)
    torch_step = step_fn(torch, torch_model, x_t, y_t)
    loss_tt, loss_t = tt_step().item(), torch_step().item()
    if not np.isclose(loss_tt, loss_t, rtol=1e-4, atol=1e-5):
        raise SystemExit(f"{name}: losses differ ({loss_tt} vs {loss_t}); not timing a wrong step")
    for (key, a), b in zip(tt_model.state_dict().items(), torch_model.state_dict().values(), strict=True):
        if not np.allclose(np.asarray(a), b.detach().numpy(), rtol=1e-3, atol=1e-5):
            raise SystemExit(f"{name}: after one step, {key} differs from torch's")
    t_tt = 1e3 * median_seconds(tt_step, 1, repeat)
    t_torch = 1e3 * median_seconds(torch_step, 1, repeat)
    print(f"| {name:<42} | {t_tt:8.2f} | {t_torch:8.2f} | {t_torch / t_tt:6.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    tt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    print(f"threads: {args.threads} (t_tensor and torch {torch.__version__})")
    print("| training step (ms, lower is better)          |       tt |    torch | torch/tt |")
    print("|---|---|---|---|")
    x = rng.standard_normal((256, 784)).astype(np.float32)
    y = rng.integers(0, 10, 256)
    bench("MLP 784-512-512-10, batch 256, SGD", mlp_pair(), x, y, args.repeat)
    x = rng.random((64, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    bench("digits CNN, batch 64, SGD", cnn_pair(), x, y, args.repeat)


if __name__ == "__main__":
    main()

"""Train an MLP and a small CNN on scikit-learn's bundled digits (8x8 images, no download) with
t_tensor, as one would with PyTorch: the same Module, loss, optimizer and loop.

    pip install -e '.[examples]'              # scikit-learn and tqdm
    python examples/train_digits.py           # both models, full length
    python examples/train_digits.py --model cnn --epochs 10

``python -m t_tensor`` runs a short version (``train(quick=True)``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import t_tensor as tt
from t_tensor import nn
from t_tensor.nn import functional as F


def load_digits_split(seed: int = 0, test_fraction: float = 0.2) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_test, y_test): images scaled to [0, 1], shape (n, 1, 8, 8), a shuffled split."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


class MLP(nn.Module):
    """64 -> 128 -> 64 -> 10 with ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)
        )

    def forward(self, x: tt.Tensor) -> tt.Tensor:
        return self.net(x)


class SmallCNN(nn.Module):
    """Two 3x3 convolutions with batch norm, max pooling, and a linear classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(32 * 2 * 2, 10))

    def forward(self, x: tt.Tensor) -> tt.Tensor:
        return self.classifier(self.features(x))


def accuracy(model: nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    model.eval()
    with tt.no_grad():
        predicted = model(tt.tensor(x)).argmax(dim=1).numpy()
    model.train()
    return float((predicted == y).mean())


def fit(model: nn.Module, data: tuple[np.ndarray, ...], epochs: int, lr: float, batch_size: int = 64,
        seed: int = 0, progress: bool = True) -> float:
    """Train with AdamW and cosine learning-rate decay; returns the test accuracy."""
    x_train, y_train, x_test, y_test = data
    optimizer = tt.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps_per_epoch = (len(y_train) + batch_size - 1) // batch_size
    scheduler = tt.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * steps_per_epoch)
    rng = np.random.default_rng(seed)
    epochs_bar = range(epochs)
    if progress:
        from tqdm import tqdm

        epochs_bar = tqdm(epochs_bar, desc=type(model).__name__, unit="epoch")
    for _ in epochs_bar:
        order = rng.permutation(len(y_train))
        total = 0.0
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            logits = model(tt.tensor(x_train[batch]))
            loss = F.cross_entropy(logits, tt.tensor(y_train[batch]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(batch)
        if progress:
            epochs_bar.set_postfix(loss=f"{total / len(order):.4f}")
    return accuracy(model, x_test, y_test)


def train(model: str = "both", epochs: int | None = None, quick: bool = False, progress: bool = True,
          seed: int = 0) -> dict[str, float]:
    """Train the chosen model(s); returns test accuracy by model name."""
    tt.manual_seed(seed)
    data = load_digits_split(seed)
    results = {}
    plans = {"mlp": (MLP, 30, 3e-3), "cnn": (SmallCNN, 20, 1e-2)}
    for name in (["mlp", "cnn"] if model == "both" else [model]):
        make, default_epochs, lr = plans[name]
        n_epochs = epochs or (3 if quick else default_epochs)
        start = time.perf_counter()
        results[name] = fit(make(), data, n_epochs, lr, seed=seed, progress=progress)
        if progress:
            print(f"{name}: test accuracy {results[name]:.4f} after {n_epochs} epochs "
                  f"({time.perf_counter() - start:.1f} s)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="a few epochs only")
    args = parser.parse_args()
    train(args.model, args.epochs, args.quick)


if __name__ == "__main__":
    main()

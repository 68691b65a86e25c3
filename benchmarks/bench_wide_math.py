"""The functions of wide_math.h in t_tensor, NumPy and PyTorch.

Each function runs on a (256, 512) float32 array (float64 for the rows marked "f64"; the size of
a layer's activations), all libraries on the same data, 2 threads for t_tensor and torch (NumPy's
ufuncs use one). Each library runs in its own child process, one after the other, within this
one run: two thread pools in one process spin against each other and distort both. Prints
microseconds per call (the minimum of 7 repeats of 20 calls) and t_tensor's speed-up over each
peer (> 1: t_tensor is faster). t_tensor's results are first checked against NumPy in float64.

Run by hand: ``python benchmarks/bench_wide_math.py``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
         "exp2", "expm1", "log2", "log10", "log1p"]
BINARY = ["atan2", "hypot", "logaddexp", "logaddexp2"]
MOD = ["fmod", "remainder", "floor_divide"]   # exact: elementwise_rows.h's vectorized fmod
FLOAT64 = ["exp", "log", "tanh"] + UNARY + BINARY + MOD   # again on float64, as "<name> f64"
NO_NUMPY = ["erf f64"]   # float64 erf (wide_math.h): NumPy has none, so t_tensor against torch only
NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
               "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2"}


def inputs(name: str) -> tuple[np.ndarray, ...]:
    """The arguments of one function, inside its domain."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    if name in ("log2", "log10", "log1p"):
        return (np.abs(x) + 0.1,)
    if name in ("asin", "acos", "atanh"):
        return (np.clip(x / 4, -0.99, 0.99),)
    if name == "acosh":
        return (np.abs(x) + 1.1,)
    if name in BINARY:
        return x, np.abs(x) + 0.1
    if name in MOD:   # quotients up to a few hundred, divisors of both signs
        return x * 100, (np.abs(rng.standard_normal(x.shape)) + 0.5).astype(np.float32) * np.sign(x)
    return (x,)


def calls(lib: str) -> dict:
    """name -> a zero-argument callable for library `lib` ("tt", "numpy" or "torch")."""
    if lib == "tt":
        sys.path.insert(0, str(ROOT))
        import t_tensor as module
        module.set_num_threads(2)
        softplus = module.softplus
    elif lib == "torch":
        import torch as module
        module.set_num_threads(2)
        softplus = module.nn.functional.softplus
    else:
        module = np
        softplus = lambda x: np.logaddexp(0, x)  # noqa: E731 - softplus with beta 1
    wrap = (lambda a: a) if lib == "numpy" else module.tensor
    table = {}
    names = UNARY + BINARY + MOD + ["softplus"] + [f"{n} f64" for n in FLOAT64]
    for name in names + ([] if lib == "numpy" else NO_NUMPY):
        if name.endswith(" f64"):
            name64 = name.split()[0]
            args = tuple(wrap(a.astype(np.float64)) for a in inputs(name64 if name64 != "log" else "log2"))
            fn = getattr(module, NUMPY_NAMES.get(name64, name64) if lib == "numpy" else name64)
            table[name] = (lambda fn=fn, args=args: fn(*args))
            continue
        args = tuple(wrap(a) for a in inputs(name))
        if name == "softplus":
            fn = softplus
        else:
            fn = getattr(module, NUMPY_NAMES.get(name, name) if lib == "numpy" else name)
        table[name] = (lambda fn=fn, args=args: fn(*args))
    return table


def child(lib: str) -> None:
    """Time every function in this process and print the times as JSON."""
    table = calls(lib)
    if lib == "tt":   # a check before timing: values against NumPy in float64
        for name, fn in table.items():
            base = name.split()[0]
            args = inputs(base if base != "log" else "log2")
            if name in NO_NUMPY:   # erf: against the C library's, element by element
                want = np.vectorize(math.erf)(args[0].astype(np.float64))
            else:
                want = np.logaddexp(0, *args) if name == "softplus" else getattr(
                    np, NUMPY_NAMES.get(base, base))(*(a.astype(np.float64) for a in args))
            np.testing.assert_allclose(fn().numpy(), want, rtol=1e-5, atol=1e-6, err_msg=name)
    times = {}
    with np.errstate(all="ignore"):
        for name, fn in table.items():
            fn()
            times[name] = min(timeit.repeat(fn, number=20, repeat=7)) / 20 * 1e6
    print(json.dumps(times))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    results = {}
    for lib in ("tt", "numpy", "torch"):
        out = subprocess.run([sys.executable, __file__, "--child", lib], check=True, capture_output=True,
                             text=True, cwd=ROOT)
        results[lib] = json.loads(out.stdout)
    print("(256, 512) float32, microseconds per call; speed-up = peer time / t_tensor time")
    print(f"{'function':<11} {'t_tensor':>9} {'NumPy':>9} {'torch':>9} {'vs NumPy':>9} {'vs torch':>9}")
    for name, t in results["tt"].items():
        n, p = results["numpy"].get(name), results["torch"][name]
        if n is None:
            print(f"{name:<11} {t:9.1f} {'n/a':>9} {p:9.1f} {'':>9} {p / t:8.2f}x")
        else:
            print(f"{name:<11} {t:9.1f} {n:9.1f} {p:9.1f} {n / t:8.2f}x {p / t:8.2f}x")


if __name__ == "__main__":
    main()

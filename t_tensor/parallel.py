"""How many threads t_tensor's kernels may use (``tt.set_num_threads`` / ``tt.get_num_threads``).

The count starts at the number of CPUs. Kernels split large work across that many threads (the
calling thread is one of them); small work stays on one thread, where starting others would cost
more than it saves.

>>> import t_tensor as tt
>>> before = tt.get_num_threads()
>>> tt.set_num_threads(1)
>>> tt.get_num_threads()
1
>>> tt.set_num_threads(before)
"""

from __future__ import annotations

import operator

from t_tensor._capi import check, lib

__all__ = ["set_num_threads", "get_num_threads"]


def set_num_threads(n: int) -> None:
    """Let kernels use up to ``n`` threads (1 to 64), as ``torch.set_num_threads``."""
    try:
        count = operator.index(n)
    except TypeError:
        raise TypeError(f"set_num_threads: expected an int, got {type(n).__name__}") from None
    if not 1 <= count <= 64:
        raise ValueError(f"set_num_threads: the number of threads must be between 1 and 64, got {count}")
    check(lib.tt_set_num_threads(count), "set_num_threads")


def get_num_threads() -> int:
    """The number of threads kernels may use."""
    return lib.tt_get_num_threads()

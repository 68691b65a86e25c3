"""The thin layer over the compiled C core: ``ffi``, ``lib`` and turning statuses into exceptions.

Everything above this module talks to C through it. C functions return a ``tt_status``; C never
raises or aborts, so :func:`check` is where a failure becomes the Python exception a user sees,
with the name of the function that was called.
"""

from __future__ import annotations

from t_tensor._C import ffi, lib

__all__ = ["ffi", "lib", "check", "status_message"]

# Which exception each status becomes. A status missing here is a bug, reported as RuntimeError.
_EXCEPTIONS: dict[int, type[Exception]] = {
    lib.TT_ERR_NOMEM: MemoryError,
    lib.TT_ERR_INVALID_ARG: ValueError,
    lib.TT_ERR_DOUBLE_FREE: RuntimeError,
    lib.TT_ERR_FOREIGN_POINTER: RuntimeError,
    lib.TT_ERR_UNSUPPORTED_DTYPE: TypeError,
    lib.TT_ERR_OVERFLOW: ValueError,
    lib.TT_ERR_LIVE_BLOCKS: RuntimeError,
    lib.TT_ERR_ZERO_DIVISION: RuntimeError,
    lib.TT_ERR_INDEX: IndexError,
}


def status_message(status: int) -> str:
    """The C core's description of a status code."""
    return ffi.string(lib.tt_status_string(status)).decode()


def check(status: int, fn: str, detail: str = "") -> None:
    """Raise the exception that matches a failed ``tt_status``; do nothing for ``TT_OK``.

    >>> check(0, "add")           # TT_OK
    >>> check(lib.TT_ERR_NOMEM, "empty", "asked for 1 TiB")
    Traceback (most recent call last):
    ...
    MemoryError: empty: out of memory (asked for 1 TiB)
    """
    if status == 0:
        return
    message = f"{fn}: {status_message(status)}"
    if detail:
        message += f" ({detail})"
    raise _EXCEPTIONS.get(status, RuntimeError)(message)

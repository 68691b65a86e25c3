"""Seeded random number generation.

A :class:`Generator` holds the 256-bit state of the C core's xoshiro256++ generator. Creation
functions (``rand``, ``randn``, ``randint``) draw from ``default_generator`` unless given one,
and :func:`manual_seed` reseeds it, so a seeded program gives the same numbers on every run.
(The streams differ from PyTorch's: same seed, different generator.)

>>> import t_tensor as tt
>>> _ = tt.manual_seed(0)
>>> a = tt.rand(3)
>>> _ = tt.manual_seed(0)
>>> bool((tt.rand(3).numpy() == a.numpy()).all())
True
"""

from __future__ import annotations

import operator
import time

from t_tensor._capi import ffi, lib

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]

_MASK64 = (1 << 64) - 1


class Generator:
    """A pseudo-random generator with its own state.

    >>> g = Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    """

    __slots__ = ("_state", "_seed")

    def __init__(self) -> None:
        self._state = ffi.new("tt_generator *")
        self.manual_seed(67280421310721)   # PyTorch's default seed, so a fresh start is fixed too

    def manual_seed(self, seed: int) -> Generator:
        """Reset the state from an integer seed (any int; taken modulo 2^64). Returns self."""
        try:
            seed = operator.index(seed)
        except TypeError:
            raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__}") from None
        self._seed = seed
        lib.tt_generator_seed(self._state, seed & _MASK64)
        return self

    def seed(self) -> int:
        """Reseed from the clock; returns the new seed."""
        new_seed = time.time_ns() & _MASK64
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> bytes:
        """The generator state as 32 bytes."""
        return bytes(ffi.buffer(self._state))

    def set_state(self, state: bytes) -> Generator:
        """Restore a state from :meth:`get_state`."""
        if not isinstance(state, (bytes, bytearray)) or len(state) != ffi.sizeof("tt_generator"):
            raise ValueError(f"set_state: expected {ffi.sizeof('tt_generator')} bytes from get_state()")
        if not any(state):
            # xoshiro's one forbidden state: it would only ever produce zeros (and randint's
            # rejection loop would never end).
            raise ValueError("set_state: the all-zero state is not a valid generator state")
        ffi.buffer(self._state)[:] = bytes(state)
        return self

    def __repr__(self) -> str:
        return f"<t_tensor.Generator seed={self._seed}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it (as ``torch.manual_seed`` does)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the clock and return that seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> bytes:
    return default_generator.get_state()


def set_rng_state(state: bytes) -> None:
    default_generator.set_state(state)

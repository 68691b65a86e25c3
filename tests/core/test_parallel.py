"""The thread count: set and read back, bad values refused with the function's name."""

from __future__ import annotations

import os

import pytest

import t_tensor as tt


@pytest.fixture(autouse=True)
def _restore_thread_count():
    before = tt.get_num_threads()
    yield
    tt.set_num_threads(before)


def test_default_is_the_cpu_count():
    assert tt.get_num_threads() == min(os.cpu_count() or 1, 64)


@pytest.mark.parametrize("n", [1, 2, 3, 64])
def test_set_then_get(n):
    tt.set_num_threads(n)
    assert tt.get_num_threads() == n


@pytest.mark.parametrize("n", [0, -1, 65])
def test_out_of_range_is_refused(n):
    with pytest.raises(ValueError, match="set_num_threads: the number of threads must be between 1 and 64"):
        tt.set_num_threads(n)


def test_non_int_is_refused():
    with pytest.raises(TypeError, match="set_num_threads: expected an int"):
        tt.set_num_threads(2.0)

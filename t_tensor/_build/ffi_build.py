"""Builds ``t_tensor._C``, the cffi extension that joins Python to the C core.

API mode, out of line: cffi writes a C file from the declarations, compiles it together with
our sources, and Python calls straight into compiled C (no libffi on the call path).

The declarations are read verbatim from ``csrc/include/tt/tt_api.h``, the single source of
truth: the C sources include the same file through ``tt.h``, so the two sides cannot drift.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"
INCLUDE = CSRC / "include"

# Declarations that exist only in the extension (csrc/python/py_glue.c and cffi callbacks).
PYTHON_ONLY_CDEF = """
extern "Python" void tt_py_release_handle(void *ctx, void *data);
uintptr_t tt_py_capsule_destructor(void);
const char *tt_py_capsule_name(int versioned, int used);
"""


def core_sources() -> list[str]:
    """Every C file of the core, sorted so that builds are reproducible."""
    files = sorted((CSRC / "src").rglob("*.c"))
    return [str(path.relative_to(ROOT)) for path in files]


def compile_args() -> list[str]:
    args = ["-O3", "-std=gnu11", "-pthread", "-Wall", "-Wextra"]
    # CI sets TT_WERROR=1 so that a warning fails the build; users are not stopped by one.
    if os.environ.get("TT_WERROR") == "1":
        args.append("-Werror")
    return args


ffibuilder = FFI()
ffibuilder.cdef((INCLUDE / "tt" / "tt_api.h").read_text() + PYTHON_ONLY_CDEF)
ffibuilder.set_source(
    "t_tensor._C",
    '#include "tt/tt.h"\n'
    "uintptr_t tt_py_capsule_destructor(void);\n"
    "const char *tt_py_capsule_name(int versioned, int used);\n",
    sources=core_sources() + ["csrc/python/py_glue.c"],
    include_dirs=[str(INCLUDE), str(CSRC / "src")],
    extra_compile_args=compile_args(),
    extra_link_args=["-pthread"],
    libraries=["m"],
)

if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(ffibuilder.compile(tmpdir=".", verbose=True) and 0)

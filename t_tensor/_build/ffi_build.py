"""Builds ``t_tensor._C``, the cffi extension that joins Python to the C core.

API mode, out of line: cffi writes a C file from the declarations, compiles it together with
our sources, and Python calls straight into compiled C (no libffi on the call path).

The declarations are read verbatim from ``csrc/include/tt/tt_api.h`` (the core: statuses, dtypes,
allocators, storage, copy) and from one header per kernel family in ``csrc/include/tt/kernels/``
(``reduce.h``, ``index.h``, ...). They are the single source of truth: the C sources include the
same files, so the two sides cannot drift. Each family header is cdef-clean (no ``#include``, no
``#if``) and is read after ``tt_api.h``, whose types it may use.

Environment switches:

* ``TT_WERROR=1`` turns compiler warnings into errors (CI).
* ``TT_SANITIZE=address`` builds with AddressSanitizer (``-fsanitize=address -fno-omit-frame-pointer
  -g -O1``, compile and link). Python itself is not instrumented, so preload the runtime and pick
  the uncached allocator (``TT_ALLOCATOR=host``, see ``t_tensor/storage.py``) so that every
  overrun lands next to an ASan redzone. libstdc++ is preloaded too: without it ASan cannot
  intercept the C++ exceptions torch throws and aborts; ``allocator_may_return_null=1`` lets the
  out-of-memory tests see a failed allocation instead of an ASan abort::

      TT_SANITIZE=address python t_tensor/_build/ffi_build.py
      LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \\
      ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:allocator_may_return_null=1 \\
      TT_ALLOCATOR=host python -m pytest tests/ops

  Rebuild without ``TT_SANITIZE`` afterwards: the sanitized module cannot load without the preload.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"
INCLUDE = CSRC / "include"

# Declarations that exist only in the extension (csrc/python/*.c and cffi callbacks), and
# the one field of tt_storage that Python reads directly (csrc/src/storage_impl.h says why); the
# rest of the struct stays opaque ("...": the compiler fills in the layout).
PYTHON_ONLY_CDEF = """
struct tt_storage { uintptr_t data_address; ...; };
extern "Python" void tt_py_release_handle(void *ctx, void *data);
uintptr_t tt_py_capsule_destructor(void);
const char *tt_py_capsule_name(int versioned, int used);
int tt_py_install_fast_ops(const char *module_name);
"""

# C that must sit inside cffi's generated module, because only that file sees cffi's own C API
# (`_cffi_from_c_pointer`, `_cffi_to_c_pointer`: how generated wrappers make and read pointer
# objects). csrc/python/fast_ops.c calls these two to make the `tt_storage *` objects that
# Storage holds, exactly as a cffi call returning one would, and to read them back. `ctype` is
# ``ffi.typeof("tt_storage *")``, which is the ctype descriptor cffi's C API takes.
CFFI_BRIDGE = """
PyObject *tt_py_cdata_from_pointer(void *pointer, PyObject *ctype) {
    return _cffi_from_c_pointer((char *)pointer, (struct _cffi_ctypedescr *)ctype);
}
void *tt_py_cdata_to_pointer(PyObject *cdata, PyObject *ctype) {
    return _cffi_to_c_pointer(cdata, (struct _cffi_ctypedescr *)ctype);
}
"""


def core_sources() -> list[str]:
    """Every C file of the core, sorted so that builds are reproducible."""
    files = sorted((CSRC / "src").rglob("*.c"))
    return [str(path.relative_to(ROOT)) for path in files]


def sanitizer_args() -> list[str]:
    """Flags for ``TT_SANITIZE`` (compile and link): only ``address`` is supported."""
    sanitize = os.environ.get("TT_SANITIZE", "")
    if sanitize == "":
        return []
    if sanitize != "address":
        raise SystemExit(f"ffi_build: TT_SANITIZE must be 'address' or unset, got {sanitize!r}")
    return ["-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-O1"]


def compile_args() -> list[str]:
    # -fno-math-errno: nothing reads errno after a math function, and with it set GCC must call
    # libm for sqrt (to set EDOM) instead of using the instruction, which keeps loops scalar.
    # -fno-wrapv undoes the -fwrapv that Python's own CFLAGS put first: with signed overflow
    # defined to wrap, GCC cannot treat `off + i` style indices as plain induction variables, and
    # vectorizes loops badly or not at all (a (256, 512) layer norm forward: 36 -> 118 us). The C
    # never relies on signed wrap-around (the C tests run under UBSan without -fwrapv).
    args = ["-O3", "-std=gnu11", "-pthread", "-Wall", "-Wextra", "-fno-math-errno", "-fno-wrapv"]
    # CI sets TT_WERROR=1 so that a warning fails the build; users are not stopped by one.
    if os.environ.get("TT_WERROR") == "1":
        args.append("-Werror")
    return args + sanitizer_args()  # the later -O1 wins over -O3


def api_headers() -> list[Path]:
    """tt_api.h first, then every kernel family's header, sorted."""
    return [INCLUDE / "tt" / "tt_api.h"] + sorted((INCLUDE / "tt" / "kernels").glob("*.h"))


def source_preamble() -> str:
    """The C that cffi's generated module starts with: the core header and each family header."""
    family_includes = "".join(f'#include "tt/kernels/{path.name}"\n' for path in api_headers()[1:])
    return '#include "tt/tt.h"\n' + family_includes


ffibuilder = FFI()
ffibuilder.cdef("".join(path.read_text() for path in api_headers()) + PYTHON_ONLY_CDEF)
ffibuilder.set_source(
    "t_tensor._C",
    source_preamble() + '#include "storage_impl.h"\n' + "uintptr_t tt_py_capsule_destructor(void);\n"
    "const char *tt_py_capsule_name(int versioned, int used);\n"
    "int tt_py_install_fast_ops(const char *module_name);\n" + CFFI_BRIDGE,
    sources=core_sources() + ["csrc/python/py_glue.c", "csrc/python/fast_ops.c"],
    include_dirs=[str(INCLUDE), str(CSRC / "src")],
    extra_compile_args=compile_args(),
    extra_link_args=["-pthread"] + sanitizer_args(),
    libraries=["m"],
)

if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(ffibuilder.compile(tmpdir=".", verbose=True) and 0)

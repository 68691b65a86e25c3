"""t_tensor: a small PyTorch-like tensor library, with a C core joined to Python by cffi.

>>> import t_tensor as tt
>>> x = tt.arange(6).view(2, 3)
>>> y = x.T                              # a view: a second owner of the same storage
>>> y.stride(), x.untyped_storage().use_count()
((1, 3), 2)

The layers, in the order data flows through them (see docs/architecture.md):
``Storage`` (reference-counted bytes in C) -> ``TensorImpl`` (shape, strides, offset, dtype)
-> ``Tensor`` (operations). Each family of functions lives in its own module and is re-exported
here explicitly.
"""

from t_tensor.creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from t_tensor.dtypes import (
    DType,
    bool,
    can_cast,
    double,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from t_tensor.interop import from_dlpack, from_numpy
from t_tensor.memory import (
    empty_cache,
    live_storages,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    pinned_memory,
    reset_peak_memory_stats,
    unpin_all,
)
from t_tensor.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from t_tensor.storage import Storage, WeakStorage
from t_tensor.tensor import Tensor
from t_tensor.views import (
    as_strided,
    broadcast_tensors,
    broadcast_to,
    chunk,
    flatten,
    narrow,
    permute,
    reshape,
    select,
    split,
    squeeze,
    swapaxes,
    t,
    transpose,
    unbind,
    unsqueeze,
)

__version__ = "0.1.0"

__all__ = [
    # tensors and storage
    "Tensor",
    "Storage",
    "WeakStorage",
    # dtypes
    "DType",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "float16",
    "float32",
    "float64",
    "half",
    "float",
    "double",
    "short",
    "int",
    "long",
    "promote_types",
    "result_type",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "get_default_dtype",
    "set_default_dtype",
    # creation
    "tensor",
    "as_tensor",
    "empty",
    "zeros",
    "ones",
    "full",
    "arange",
    "linspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    # views
    "reshape",
    "permute",
    "transpose",
    "swapaxes",
    "t",
    "squeeze",
    "unsqueeze",
    "flatten",
    "narrow",
    "select",
    "split",
    "chunk",
    "unbind",
    "broadcast_to",
    "broadcast_tensors",
    "as_strided",
    # interop
    "from_numpy",
    "from_dlpack",
    # memory
    "memory_stats",
    "reset_peak_memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "empty_cache",
    "pinned_memory",
    "unpin_all",
    "live_storages",
    # random
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
]

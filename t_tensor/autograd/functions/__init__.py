"""The differentiable primitives, one module per op family, each a set of
:class:`~t_tensor.autograd.function.Function` subclasses with forward and backward side by side.
Importing this package registers them all in ``FUNCTIONS``, where the op modules find them."""

from t_tensor.autograd.functions import (  # noqa: F401
    elementwise,
    indexing,
    linalg,
    manipulation,
    nn,
    reductions,
    views,
)

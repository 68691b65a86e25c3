"""Neural-network building blocks. For now: :mod:`t_tensor.nn.functional`, the stateless functions
(convolution, pooling, resampling), used as ``tt.nn.functional.conv2d`` like PyTorch.

>>> import t_tensor as tt
>>> tt.nn.functional.conv2d(tt.ones(1, 1, 3, 3), tt.ones(1, 1, 2, 2)).tolist()
[[[[4.0, 4.0], [4.0, 4.0]]]]
"""

from t_tensor.nn import functional

__all__ = ["functional"]

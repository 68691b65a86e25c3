"""Make tests/helpers.py importable from every test folder, and keep the torch reference from crashing.

torch 2.13's oneDNN (mkldnn) brgemm convolution segfaults the process on some small convolutions
that the hypothesis strategies draw, e.g. ``conv1d`` of an unbatched (4, 1) float32 input with a
(4, 2, 1) weight, bias, stride 3, padding 2, dilation 2, groups 2 (the crash is in
``dnnl::impl::cpu::x64::brgemm_convolution_fwd_t::perform_outwork``; plain torch, no t_tensor
loaded). Hypothesis draws new examples every run, so the suite died at random in
``test_conv1d``. Every reference computation therefore runs on torch's native CPU kernels:
``torch.backends.mkldnn.enabled = False`` for the whole test session (and for subprocesses that
import this module). ``tests/ops/test_convolution.py::test_torch_reference_survives_onednn_crash``
checks the switch.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))

torch.backends.mkldnn.enabled = False

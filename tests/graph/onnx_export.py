"""Exporting a torch model to ONNX for the graph tests: one way, shared by the importer and the
passes tests (BatchNorm given non-trivial statistics so that folding it matters)."""

from __future__ import annotations

import io
import warnings

import numpy as np
import torch


def export_to_onnx(net: torch.nn.Module, shape: tuple[int, ...],
                   dynamic_axes: dict[str, dict[int, str]] | None = None) -> tuple[bytes, np.ndarray, np.ndarray]:
    """(ONNX bytes, an input of ``shape``, torch's output for it), with the model in eval mode.
    ``dynamic_axes`` (as ``torch.onnx.export``'s, for the input "x" and output "y") names dims
    that stay symbolic in the model."""
    torch.manual_seed(0)
    for module in net.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.5, 0.5)
    net.eval()
    x = torch.randn(*shape)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (x,), buffer, dynamo=False, opset_version=17, input_names=["x"],
                          output_names=["y"], do_constant_folding=False, dynamic_axes=dynamic_axes)
    with torch.no_grad():
        expected = net(x).numpy()
    return buffer.getvalue(), x.numpy(), expected

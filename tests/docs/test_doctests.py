"""Run the examples in the docstrings of the public modules (one test per module) and in the
Markdown pages under docs/ (one test per page).

An example is documentation that can go stale; running it keeps it honest. Every module listed
here must have at least one example, and all of them must pass. A Markdown page runs as one
session, top to bottom, as a reader would type it.
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if ">>> " in p.read_text())

MODULES = [
    "t_tensor",
    "t_tensor.strides",
    "t_tensor.dtypes",
    "t_tensor.storage",
    "t_tensor.tensor_impl",
    "t_tensor.tensor",
    "t_tensor.views",
    "t_tensor.elementwise",
    "t_tensor.manipulation",
    "t_tensor.sorting",
    "t_tensor.nn",
    "t_tensor.nn.functional",
    "t_tensor.nn.normalization",
    "t_tensor.nn.functional_core",
    "t_tensor.nn.parameter",
    "t_tensor.nn.module",
    "t_tensor.nn.init",
    "t_tensor.nn.modules.container",
    "t_tensor.nn.modules.linear",
    "t_tensor.nn.modules.activation",
    "t_tensor.nn.modules.dropout",
    "t_tensor.nn.modules.sparse",
    "t_tensor.nn.modules.normalization",
    "t_tensor.nn.modules.loss",
    "t_tensor.indexing",
    "t_tensor.linalg",
    "t_tensor.reductions",
    "t_tensor.creation",
    "t_tensor.memory",
    "t_tensor.interop",
    "t_tensor.random",
    "t_tensor.parallel",
    "t_tensor.printing",
    "t_tensor.array_api",
    "t_tensor._capi",
    "t_tensor.autograd",
    "t_tensor.autograd.grad_mode",
    "t_tensor.autograd.function",
    "t_tensor.autograd.engine",
    "t_tensor.autograd.gradcheck",
    "t_tensor.autograd.tensor_methods",
    "t_tensor.autograd.inspect",
    "t_tensor.optim",
    "t_tensor.optim.optimizer",
    "t_tensor.optim.sgd",
    "t_tensor.optim.adam",
    "t_tensor.optim.rmsprop",
    "t_tensor.optim.lr_scheduler",
    "t_tensor.serialization",
    "t_tensor.graph.memory_plan",
    # graph-core
    "t_tensor.graph",
    "t_tensor.graph.ir",
    "t_tensor.graph.shape_inference",
    "t_tensor.graph.kernels",
    "t_tensor.graph.executor",
    "t_tensor.graph.trace",
    "t_tensor.graph.onnx_names",
    "t_tensor.jit",
    "t_tensor.onnx",
    # graph layer: fused elementwise kernels
    "t_tensor.graph.fused_expr",
    # graph layer: optimization passes
    "t_tensor.graph.passes",
    "t_tensor.graph.passes._common",
    "t_tensor.graph.passes.dce",
    "t_tensor.graph.passes.constant_folding",
    "t_tensor.graph.passes.cse",
    "t_tensor.graph.passes.transpose",
    "t_tensor.graph.passes.batchnorm_fold",
    "t_tensor.graph.passes.conv_fuse",
    "t_tensor.graph.passes.elementwise_fusion",
    "t_tensor.graph.passes.gemm_activation",
    "t_tensor.graph.passes.reshape_fold",
    # graph layer: arena executor and its prepared steps
    "t_tensor.graph.arena",
    "t_tensor.graph.steps",
]

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(tests: list[doctest.DocTest], name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report = io.StringIO()
    for test in tests:
        runner.run(test, out=report.write)
    results = runner.summarize(verbose=False)
    assert results.attempted > 0, f"{name} has no examples"
    failures = f"{results.failed} of {results.attempted} examples failed in {name}:\n{report.getvalue()}"
    assert results.failed == 0, failures


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    _run(doctest.DocTestFinder().find(importlib.import_module(name)), name)


def test_pages_with_examples_exist() -> None:
    assert any(p.name == "storage_and_views.md" for p in PAGES), PAGES


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_markdown_examples(path: Path) -> None:
    test = doctest.DocTestParser().get_doctest(path.read_text(), {}, path.name, str(path), 0)
    _run([test], str(path.relative_to(DOCS)))

"""Execute every notebook under docs/ from top to bottom; a failing cell or assert fails the test.

The kernel runs this very interpreter (``sys.executable``), whatever the machine's registered
``python3`` kernel points to, and imports t_tensor from this checkout. Each notebook runs in a
fresh kernel with its own folder as the working directory, as it would when opened in Jupyter.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOTEBOOKS = sorted(p for p in DOCS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
KERNEL_NAME = "python3"
CELL_TIMEOUT = 120  # seconds


def _id(path: Path) -> str:
    return str(path.relative_to(DOCS))


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kernel spec named python3 that starts this interpreter."""
    kernels = tmp_path_factory.mktemp("kernels")
    spec = kernels / KERNEL_NAME
    spec.mkdir()
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (t_tensor tests)",
                "language": "python",
            }
        )
    )
    return kernels


def test_notebooks_exist() -> None:
    assert NOTEBOOKS, f"no notebooks found under {DOCS}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.get("kernelspec", {}).get("name") == KERNEL_NAME
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"cell {index} has stored outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_notebook_runs(path: Path, kernel_dir: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    specs = KernelSpecManager(kernel_dirs=[str(kernel_dir)])
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    client = NotebookClient(
        notebook,
        km=manager,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(path.parent)}},
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    # cleanup_kc: shut the kernel down afterwards, although the client does not own the manager.
    client.execute(env=env, cleanup_kc=True)

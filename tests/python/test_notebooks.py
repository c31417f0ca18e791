"""The example notebooks run from top to bottom, and are committed without outputs."""

import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples" / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert [n.name for n in NOTEBOOKS] == ["fleet.ipynb", "reference.ipynb", "replay.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name} has outputs committed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executes(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    env_backend = os.environ.setdefault("MPLBACKEND", "Agg")
    assert env_backend
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    # The report cell printed the report.
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "loopcast" in text

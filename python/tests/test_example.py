"""examples/analyze_fleet.py runs end to end on corpora/fleet-snapshots and
saves its four figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import CORPUS

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "analyze_fleet.py"


def test_analyze_fleet_example(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, str(EXAMPLE), str(CORPUS), str(tmp_path)],
                       capture_output=True, text=True, timeout=900, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("ratio_by_mode", "cross_matrix", "code_lengths", "size_cdf"):
        png = tmp_path / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert (tmp_path / "fleet.table.json").exists()
    assert "fleet held-out ratios" in r.stdout


NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "fleet_walkthrough.ipynb"


def test_fleet_walkthrough_notebook_runs_top_to_bottom(tmp_path):
    """The example notebook (train -> evaluate -> plots -> export) executes
    in a fresh kernel without an error, and shows what it says it shows."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        "the notebook is committed without outputs"
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                     for o in outputs)
    assert "fleet" in text and "canned-fast vs fixed" in text
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 4, f"{len(images)} figures"
    assert "#define" in text or "static const" in text, "the exported header is shown"

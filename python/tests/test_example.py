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

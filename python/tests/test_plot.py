"""cannery.plot: every figure returns Axes drawn from exactly the data given
(bar heights, heat-map cells, step values, CDF steps) and saves with Agg."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

import cannery  # noqa: E402
from cannery import plot  # noqa: E402
from conftest import struct_page, text_page  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_ratio_by_mode_bars_match_rows(tmp_path):
    rows = [
        {"workload": w, "mode": m, "ratio": r}
        for w, base in (("redis", 2.0), ("python", 3.0))
        for m, r in (("fixed", base), ("canned", base * 1.1), ("dynamic", base * 1.2))
    ]
    ax = plot.ratio_by_mode(rows, modes=["fixed", "canned"])
    assert isinstance(ax, Axes)
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == sorted(round(r["ratio"], 6) for r in rows if r["mode"] != "dynamic")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["redis", "python"]
    ax.figure.savefig(tmp_path / "ratio.png")
    assert (tmp_path / "ratio.png").stat().st_size > 1000


def test_ratio_by_mode_accepts_dataframes():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame([{"workload": "a", "mode": "canned", "ratio": 2.5}])
    ax = plot.ratio_by_mode(df)
    assert [round(p.get_height(), 3) for p in ax.patches] == [2.5]


def test_cross_matrix_cells_match_rows():
    rows = [{"table": t, "workload": w, "ratio": 1 + i + 10 * j}
            for i, t in enumerate(["t1", "t2", "t3"]) for j, w in enumerate(["a", "b"])]
    fig, ax = plt.subplots()
    out = plot.cross_matrix(rows, ax=ax)
    assert out is ax
    grid = np.asarray(ax.images[0].get_array())
    assert grid.shape == (3, 2)
    assert grid[2, 1] == 1 + 2 + 10
    assert len(ax.texts) == 6


def test_code_length_profile_draws_both_tables(kernel_table):
    ax = plot.code_length_profile(kernel_table, cannery.Table.fixed())
    lines = {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}
    assert set(lines) == {"kernel-2024", "fixed"}
    y = np.asarray(lines["kernel-2024"].get_ydata())
    assert list(y) == kernel_table.litlen_lengths + kernel_table.dist_lengths


def test_size_cdf_steps_reach_one(kernel_table):
    pages = [text_page(s) for s in range(5)] + [struct_page(s) for s in range(5)]
    sizes = {m: cannery.compressed_sizes(pages, table=kernel_table, mode=m)
             for m in ("fixed", "canned")}
    ax = plot.size_cdf(sizes)
    drawn = [line for line in ax.lines if line.get_label().split(" ")[0] in sizes]
    assert len(drawn) == 2
    for line in drawn:
        name = line.get_label().split(" ")[0]
        assert list(line.get_xdata()) == sorted(sizes[name])
        assert line.get_ydata()[-1] == 1.0
    single = plot.size_cdf([100, 200, 4096])
    assert len([l for l in single.lines if l.get_label().startswith("pages")]) == 1

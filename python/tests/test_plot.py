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


def clipped_labels(fig) -> list[str]:
    """What a plain ``fig.savefig`` would cut: the sides of the figure that
    the box around everything drawn (titles, axis and tick labels, legends,
    colour bars, cell annotations) crosses. Empty when every label is whole."""
    fig.canvas.draw()
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    w, h = fig.get_size_inches()
    eps = 0.01
    sides = {"left": drawn.x0 < -eps, "bottom": drawn.y0 < -eps,
             "right": drawn.x1 > w + eps, "top": drawn.y1 > h + eps}
    return [side for side, out in sides.items() if out]


ALL_MODES = [
    "canned-fast", "canned-default", "canned-best", "canned:kernel-2024", "fixed",
    "dynamic-fast", "dynamic-best", "zstd-1", "zstd-3", "zstd-1-dict", "lz4", "libdeflate-1",
    "libdeflate-6", "zlib-6", "miniz-6", "kernel-deflate",
]
WORKLOADS = ["gcc-build", "jvm-index", "node-service", "python-etl", "redis"]


def test_plots_saved_plainly_keep_every_label_and_fit_a_notebook(tmp_path):
    rows = [{"workload": w, "mode": m, "ratio": 2.0 + 0.1 * i + 0.3 * j}
            for j, w in enumerate(WORKLOADS) for i, m in enumerate(ALL_MODES)]
    ax = plot.ratio_by_mode(rows)
    fig = ax.figure
    assert clipped_labels(fig) == []
    assert fig.get_size_inches()[0] <= plot.MAX_WIDTH
    fig.savefig(tmp_path / "modes.png")
    names = [f"table-{n}" for n in ("gcc-build", "jvm-index", "node-service", "fleet", "kernel-2024")]
    matrix = [{"table": t, "workload": w, "ratio": 2.5 + i * 0.1 + j * 0.01}
              for i, t in enumerate(names) for j, w in enumerate(WORKLOADS)]
    ax = plot.cross_matrix(matrix)
    assert clipped_labels(ax.figure) == []
    assert ax.figure.get_size_inches()[0] <= plot.MAX_WIDTH
    for fig in (plot.code_length_profile(cannery.Table.kernel_2024()).figure,
                plot.size_cdf({"fixed": [100, 4096], "canned:kernel-2024": [90, 300]}).figure):
        assert clipped_labels(fig) == []


def test_mode_colors_are_distinct_and_grouped_by_family():
    import colorsys

    colors = plot.mode_colors(ALL_MODES)
    assert len(set(colors.values())) == len(ALL_MODES), "16 modes, 16 colours"
    hue = {m: colorsys.rgb_to_hsv(*colors[m][:3])[0] for m in ALL_MODES}
    canned = [m for m in ALL_MODES if m.startswith("canned")]
    # The canned modes share the blue family, and no other mode is in it.
    assert all(0.5 < hue[m] < 0.7 for m in canned), {m: hue[m] for m in canned}
    blue = [m for m in ALL_MODES if m not in canned and 0.5 < hue[m] < 0.7
            and colorsys.rgb_to_hsv(*colors[m][:3])[1] > 0.2]
    assert blue == [], blue
    # canned-best and zstd-1 no longer look alike.
    assert colors["canned-best"] != colors["zstd-1"]

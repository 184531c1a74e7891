"""Matplotlib figures for notebooks: each function draws on ``ax`` (a new
figure if None) and returns the Axes, so cells can restyle or save them.

- ``ratio_by_mode``: compression ratio per workload, one bar per mode.
- ``cross_matrix``: ratio of every table (rows) on every workload (columns).
- ``code_length_profile``: a table's code lengths symbol by symbol, against another.
- ``size_cdf``: cumulative distribution of per-page compressed sizes.

The functions only draw data computed elsewhere (``cannery.evaluate``,
``cannery.cross_evaluate``, ``cannery.compressed_sizes``, ``Table``); they
compute no compression statistics themselves. Requires matplotlib.

New figures use constrained layout and at most a notebook's width (10
inches), so a plain ``fig.savefig(...)`` keeps every label; modes get
colours by family (canned modes in blues, dynamic in greens, fixed in grey,
each outside compressor family in its own hue), distinct for up to 16 modes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from cannery._native import Table

__all__ = [
    "code_length_profile",
    "cross_matrix",
    "mode_colors",
    "ratio_by_mode",
    "size_cdf",
]

PAGE_SIZE = 4096

#: The widest new figure, in inches: a notebook cell's width.
MAX_WIDTH = 10.0

#: Colour families by mode name prefix (first match wins): a matplotlib
#: sequential colormap per family, so modes of one family share a hue and
#: differ in lightness.
_FAMILIES: list[tuple[tuple[str, ...], str]] = [
    (("canned", "best-of"), "Blues"),
    (("dynamic",), "Greens"),
    (("fixed",), "Greys"),
    (("zstd",), "Oranges"),
    (("lz4",), "Purples"),
    (("libdeflate",), "Reds"),
    (("zlib", "miniz"), "YlOrBr"),
    (("kernel",), "RdPu"),
]


def mode_colors(modes: Sequence[str]) -> dict[str, tuple[float, float, float, float]]:
    """A colour for each mode: modes of one family (``canned-*`` and
    ``canned:*``, ``dynamic-*``, ``zstd-*``, ...) take shades of one hue, from
    dark to light in the order given; modes of no family take the
    qualitative ``tab10`` colours."""
    import matplotlib

    groups: dict[str, list[str]] = {}
    other: list[str] = []
    for m in modes:
        for prefixes, cmap in _FAMILIES:
            if m.startswith(prefixes):
                groups.setdefault(cmap, []).append(m)
                break
        else:
            other.append(m)
    colors: dict[str, tuple[float, float, float, float]] = {}
    for cmap, members in groups.items():
        shades = matplotlib.colormaps[cmap]
        n = len(members)
        for i, m in enumerate(members):
            # From 0.9 (dark) towards 0.4 (light): readable on white.
            colors[m] = tuple(shades(0.9 - 0.5 * i / max(1, n - 1) if n > 1 else 0.75))  # type: ignore[assignment]
    tab = matplotlib.colormaps["tab10"]
    for i, m in enumerate(other):
        colors[m] = tuple(tab(i % 10))  # type: ignore[assignment]
    return colors


def _axes(ax: Optional[Axes], figsize: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    width, height = figsize
    _, new = plt.subplots(figsize=(min(width, MAX_WIDTH), height), constrained_layout=True)
    return new


def _records(data: Any) -> list[dict[str, Any]]:
    """Rows of a DataFrame, or a list of dicts as ``cannery.evaluate`` gives without pandas."""
    if hasattr(data, "to_dict"):
        rows: list[dict[str, Any]] = data.to_dict("records")
        return rows
    return [dict(r) for r in data]


def ratio_by_mode(
    results: Any,
    *,
    modes: Optional[Sequence[str]] = None,
    value: str = "ratio",
    ax: Optional[Axes] = None,
) -> Axes:
    """Grouped bars: for each workload, the ``value`` column (default
    ``ratio``, uncompressed/compressed bytes) of each mode.

    ``results`` is what ``cannery.evaluate`` returns (a DataFrame or a list
    of dicts with ``workload``, ``mode`` and ``value`` keys). ``modes``
    picks and orders the modes (default: all, in first-seen order).
    """
    rows = _records(results)
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    all_modes = list(dict.fromkeys(r["mode"] for r in rows))
    shown = list(modes) if modes is not None else all_modes
    table = {(r["workload"], r["mode"]): float(r[value]) for r in rows}
    ax = _axes(ax, (max(6.0, 1.2 * len(workloads) * max(1, len(shown)) / 3), 4.5))
    x = np.arange(len(workloads))
    width = 0.8 / max(1, len(shown))
    colors = mode_colors(shown)
    for i, mode in enumerate(shown):
        heights = [table.get((w, mode), np.nan) for w in workloads]
        ax.bar(x + (i - (len(shown) - 1) / 2) * width, heights, width, label=mode,
               color=colors[mode])
    ax.set_xticks(x)
    ax.set_xticklabels(workloads, rotation=30, ha="right")
    ax.set_ylabel(value.replace("_", " "))
    ax.set_title(f"{value.replace('_', ' ')} by mode per workload")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    finite = [v for v in table.values() if np.isfinite(v)]
    if finite:
        ax.set_ylim(0, max(finite) * 1.1)
    # Beside the bars, one column per 8 modes: constrained layout makes room.
    ax.legend(fontsize="small", ncol=1 + (len(shown) - 1) // 8, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return ax


def cross_matrix(
    matrix: Any,
    *,
    value: str = "ratio",
    annotate: bool = True,
    ax: Optional[Axes] = None,
) -> Axes:
    """Heat map of a table x workload matrix: cell (t, w) is ``value`` of
    table t on workload w's pages.

    ``matrix`` is what ``cannery.cross_evaluate`` returns (a DataFrame or a
    list of dicts with ``table``, ``workload`` and ``value`` keys). The
    diagonal shows each workload's own table; off-diagonal cells show what
    a table trained elsewhere would give.
    """
    rows = _records(matrix)
    tables = list(dict.fromkeys(r["table"] for r in rows))
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    grid = np.full((len(tables), len(workloads)), np.nan)
    for r in rows:
        grid[tables.index(r["table"]), workloads.index(r["workload"])] = float(r[value])
    ax = _axes(ax, (3.0 + 0.9 * len(workloads), 1.5 + 0.45 * len(tables)))
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label=value.replace("_", " "))
    ax.set_xticks(np.arange(len(workloads)))
    ax.set_xticklabels(workloads, rotation=30, ha="right")
    ax.set_yticks(np.arange(len(tables)))
    ax.set_yticklabels(tables)
    ax.set_xlabel("pages of workload")
    ax.set_ylabel("table")
    ax.set_title(f"{value.replace('_', ' ')}: table x workload")
    if annotate:
        finite = grid[np.isfinite(grid)]
        middle = float(finite.mean()) if finite.size else 0.0
        for (i, j), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize="small",
                        color="black" if v > middle else "white")
    return ax


def code_length_profile(
    table: Table,
    other: Optional[Table] = None,
    *,
    ax: Optional[Axes] = None,
) -> Axes:
    """Code length of every literal/length symbol (0-285) and distance symbol
    (shown as 286-315) of ``table``, as steps, with ``other`` (for example
    the kernel's 2024 table) drawn behind it. Shorter is cheaper: a symbol
    with length n costs n bits (plus extra bits for lengths and distances).
    """
    ax = _axes(ax, (10.0, 4.0))
    symbols = np.arange(286 + 30)

    def lengths(t: Table) -> np.ndarray:
        return np.array(list(t.litlen_lengths) + list(t.dist_lengths), dtype=float)

    def label(t: Table) -> str:
        return t.name or t.id

    if other is not None:
        ax.step(symbols, lengths(other), where="mid", color="grey", alpha=0.7,
                label=label(other))
    ax.step(symbols, lengths(table), where="mid", label=label(table))
    for x, text in ((128, "literals"), (271, "lengths"), (301, "distances")):
        ax.text(x, 15.4, text, ha="center", fontsize="small")
    ax.axvline(255.5, color="black", linewidth=0.5)
    ax.axvline(285.5, color="black", linewidth=0.5)
    ax.set_xlim(-1, 316)
    ax.set_ylim(0, 16.5)
    ax.invert_yaxis()
    ax.set_xlabel("symbol (literal/length 0-285, then distance 0-29)")
    ax.set_ylabel("code length (bits)")
    ax.set_title("code-length profile" + (f": {label(table)} vs {label(other)}" if other else ""))
    ax.legend(fontsize="small")
    return ax


def size_cdf(
    sizes: Mapping[str, Sequence[int]] | Sequence[int],
    *,
    ax: Optional[Axes] = None,
) -> Axes:
    """Empirical CDF of per-page compressed sizes (bytes; 4096 = stored raw),
    one line per entry of ``sizes`` (label -> sizes, e.g. per mode from
    ``cannery.compressed_sizes``), or a single line for a plain sequence.
    """
    series: Mapping[str, Sequence[int]] = (
        sizes if isinstance(sizes, Mapping) else {"pages": sizes}
    )
    ax = _axes(ax, (7.0, 4.0))
    for name, values in series.items():
        v = np.sort(np.asarray(values, dtype=float))
        if v.size == 0:
            continue
        y = np.arange(1, v.size + 1) / v.size
        median = float(np.median(v))
        ax.step(v, y, where="post", label=f"{name} (median {median:.0f} B)")
    ax.axvline(PAGE_SIZE, color="grey", linestyle="--", linewidth=0.8)
    ax.text(PAGE_SIZE, 0.5, "stored raw ", fontsize="small", color="grey", rotation=90,
            ha="right", va="center")
    ax.set_xlim(0, PAGE_SIZE * 1.08)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel("compressed size per page (bytes)")
    ax.set_ylabel("fraction of pages")
    ax.set_title("per-page compressed size (CDF)")
    ax.legend(fontsize="small", loc="lower right")
    return ax


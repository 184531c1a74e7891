"""Analyze the fleet-snapshots corpus end to end and save the plots.

Trains one canned table per workload plus a fleet table (held-out split),
evaluates them against fixed/dynamic deflate, the kernel's 2024 table and
the peer compressors, and saves four figures to the output directory:

- ratio_by_mode.png        held-out ratio by mode, per workload
- cross_matrix.png         every trained table on every workload
- code_lengths.png         the fleet table's code lengths vs kernel-2024
- size_cdf.png             per-page compressed sizes, fleet table vs others

Usage: python python/examples/analyze_fleet.py [CORPUS] [OUTDIR]
(defaults: corpora/fleet-snapshots and plots/). Everything is computed by
the cannery package (Rust); this script only wires calls together.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import cannery  # noqa: E402
from cannery import plot  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "corpora" / "fleet-snapshots"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("plots")
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    files = cannery.open_corpus(corpus)
    print(f"corpus {corpus}: " + ", ".join(f"{w} ({len(fs)} files)" for w, fs in files.items()))

    tables, report = cannery.train_with_report(corpus, peers=True)
    for name, table in tables.items():
        table.save(out / f"{name}.table.json")
    print(f"trained {len(tables)} tables in {time.monotonic() - started:.0f} s: {', '.join(tables)}")

    # Held-out results per workload and mode, from the training report.
    rows = [
        {"workload": w["name"], "mode": mode, **result}
        for w in report["workloads"]
        for mode, result in w["modes"].items()
    ]
    modes = ["fixed", "canned:kernel-2024", "canned:fleet", "canned-fast", "dynamic-fast", "zstd-1",
             "lz4"]
    ax = plot.ratio_by_mode(rows, modes=[m for m in modes if any(r["mode"] == m for r in rows)])
    ax.figure.savefig(out / "ratio_by_mode.png", dpi=120, bbox_inches="tight")

    kernel = cannery.Table.kernel_2024()
    matrix = cannery.cross_evaluate({**tables, "kernel-2024": kernel}, corpus, part="test")
    ax = plot.cross_matrix(matrix)
    ax.figure.savefig(out / "cross_matrix.png", dpi=120, bbox_inches="tight")

    ax = plot.code_length_profile(tables["fleet"], kernel)
    ax.figure.savefig(out / "code_lengths.png", dpi=120, bbox_inches="tight")

    pages = [p for fs in files.values() for f in fs for p in cannery.open_pages(f).to_numpy()[::10]]
    sizes = {
        "fixed": cannery.compressed_sizes(pages, mode="fixed"),
        "canned kernel-2024": cannery.compressed_sizes(pages, table=kernel),
        "canned fleet": cannery.compressed_sizes(pages, table=tables["fleet"]),
        "dynamic": cannery.compressed_sizes(pages, mode="dynamic"),
    }
    ax = plot.size_cdf(sizes)
    ax.figure.savefig(out / "size_cdf.png", dpi=120, bbox_inches="tight")

    fleet = report["fleet"]["modes"]
    print("fleet held-out ratios: " + ", ".join(
        f"{m} {fleet[m]['ratio']:.3f}" for m in modes if m in fleet))
    for name in ("ratio_by_mode", "cross_matrix", "code_lengths", "size_cdf"):
        print(f"wrote {out / (name + '.png')}")
    print(f"took {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

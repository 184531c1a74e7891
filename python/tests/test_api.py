"""The API as a user meets it: help() and inspect show the real defaults,
train and train_with_report agree on them, long calls report progress to
a callback (and its exceptions reach the caller), file errors are Python's
own OSError subclasses with the path, and per-page sizes are NumPy."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import cannery
from conftest import struct_page, text_page

PAGES = {"text": [text_page(s) for s in range(80)], "struct": [struct_page(s) for s in range(80)]}


def _defaults(f):
    return {
        name: p.default
        for name, p in inspect.signature(f).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def test_signatures_show_real_defaults_and_train_functions_agree():
    train = _defaults(cannery.train)
    assert train["eval_pages"] == 1000 and train["peers"] is True and train["progress"] is None
    assert all(v is not Ellipsis for v in train.values()), train
    assert _defaults(cannery.train_with_report) == train
    assert "eval_pages=1000" in (cannery.train.__text_signature__ or "")
    ev = _defaults(cannery.evaluate)
    assert ev["eval_pages"] == 1000 and ev["progress"] is None


def test_train_reports_progress_and_the_tables_do_not_depend_on_it():
    heard: list[tuple[str, int, int]] = []
    tables = cannery.train(PAGES, progress=lambda step, done, total: heard.append((step, done, total)))
    steps = [s for s, _, _ in heard]
    assert "scanning text" in steps and "training fleet" in steps and "evaluating struct" in steps
    # Scan, train and evaluate each of 2 workloads, then the fleet table.
    assert {t for _, _, t in heard} == {3 * 2 + 1}
    assert [d for _, d, _ in heard] == list(range(1, 8))
    assert tables == cannery.train(PAGES)


def test_a_progress_callback_that_raises_stops_nothing_but_is_raised():
    def boom(step: str, done: int, total: int) -> None:
        raise RuntimeError(f"callback failed at {step}")

    with pytest.raises(RuntimeError, match="callback failed at scanning"):
        cannery.train(PAGES, progress=boom)


def test_evaluate_reports_progress_per_workload():
    t = cannery.Table.kernel_2024()
    heard: list[tuple[str, int, int]] = []
    cannery.evaluate(t, PAGES, peers=False, progress=lambda *a: heard.append(a))
    assert [h[0] for h in heard] == ["evaluating text", "evaluating struct"]  # dict order
    assert [h[1:] for h in heard] == [(1, 2), (2, 2)]


def test_missing_files_raise_file_not_found_with_the_path(tmp_path):
    missing = tmp_path / "nope.table.json"
    with pytest.raises(FileNotFoundError) as e:
        cannery.Table.load(missing)
    assert e.value.filename == str(missing) and e.value.errno == 2
    with pytest.raises(FileNotFoundError) as e:
        cannery.Histogram.load(tmp_path / "nope.hist.json")
    assert e.value.filename == str(tmp_path / "nope.hist.json")


def test_loaders_are_bounded_and_empty_measurements_refused():
    # /dev/zero never ends: refused after the 16 MiB limit, as the CLI does.
    for load in (cannery.Table.load, cannery.Histogram.load):
        with pytest.raises(ValueError, match="larger than"):
            load("/dev/zero")
    # A measurement of no pages is no result.
    with pytest.raises(ValueError, match="no page to measure"):
        cannery.evaluate(cannery.Table.kernel_2024(), {"a": []}, peers=False)


def test_compressed_sizes_is_a_numpy_array():
    sizes = cannery.compressed_sizes(PAGES["text"][:5], mode="fixed")
    assert isinstance(sizes, np.ndarray) and sizes.dtype == np.int64 and sizes.shape == (5,)
    assert (sizes > 0).all() and (sizes <= 4096).all()
    assert cannery.compressed_sizes([], mode="fixed").shape == (0,)


def test_stub_docstrings_match_the_modules():
    """Every function, class and method in the type stubs carries the
    docstring help() shows, so editors reading the stubs show the same."""
    import ast

    from conftest import REPO

    stub = (REPO / "python" / "cannery" / "_native.pyi").read_text()
    checked = 0

    def walk(body: list[ast.stmt], obj: object, where: str) -> None:
        nonlocal checked
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            if node.name.startswith("__") and node.name != "__new__":
                continue
            live = getattr(obj, node.name)
            want = inspect.cleandoc(live.__doc__ or "")
            got = ast.get_docstring(node) or ""
            assert want, f"{where}{node.name} has no docstring in the module"
            assert got == want, f"{where}{node.name}: the stub's docstring differs"
            checked += 1
            if isinstance(node, ast.ClassDef):
                walk(node.body, live, f"{where}{node.name}.")

    walk(ast.parse(stub).body, cannery._native, "")
    assert checked > 60, checked

"""train / train_from_histogram / evaluate / cross_evaluate: tables that are
IAA-safe, deterministic, better than the kernel's on their own kind of
pages, and evaluation figures that agree with per-page compression."""

from __future__ import annotations

import math

import pytest

import cannery
from conftest import CORPUS, struct_page, text_page

TEXT = [text_page(s) for s in range(120)]
STRUCT = [struct_page(s) for s in range(120)]


@pytest.fixture(scope="module")
def trained():
    return cannery.train({"text": TEXT, "struct": STRUCT})


def test_train_gives_workload_and_fleet_tables(trained):
    assert list(trained) == ["text", "struct", "fleet"]
    for name, t in trained.items():
        assert t.name == name and t.iaa_compatible and t.is_standard
        assert t.provenance["source"] == "trained"
        for page in (text_page(1000), struct_page(1000)):
            body = cannery.compress_page(page, table=t)
            assert cannery.decompress_page(body, table=t) == page


def test_trained_tables_beat_the_kernel_table_on_new_pages(trained):
    kernel = cannery.Table.kernel_2024()
    fresh = {"text": [text_page(s) for s in range(500, 530)],
             "struct": [struct_page(s) for s in range(500, 530)]}
    for name, pages in fresh.items():
        own = sum(cannery.compressed_sizes(pages, table=trained[name]))
        assert own < sum(cannery.compressed_sizes(pages, table=kernel))
        assert own <= sum(cannery.compressed_sizes(pages, table=trained["fleet"]))


def test_training_is_deterministic(trained):
    again = cannery.train({"text": TEXT, "struct": STRUCT})
    for name in trained:
        assert again[name].to_binary() == trained[name].to_binary()
        assert again[name].to_json() == trained[name].to_json()


def test_train_from_histogram_matches_histogram_to_table():
    h = cannery.Histogram.from_pages(TEXT)
    t = cannery.train_from_histogram(h, name="text")
    assert t == h.to_table(name="text") and t.name == "text"
    assert t.provenance["training"]["pages"] == len(TEXT)
    q = cannery.train_from_histogram(h, qpl_compatible=True, smoothing="add-one")
    assert q.iaa_compatible and q.provenance["training"]["qpl_compatible"] is True
    with pytest.raises(cannery.InvalidInputError):
        cannery.train_from_histogram(h, smoothing="laplace")


def test_too_few_pages():
    with pytest.raises(cannery.TrainError, match="pages"):
        cannery.train_from_histogram(cannery.Histogram.from_pages(TEXT[:5]))
    with pytest.raises(cannery.TrainError):
        cannery.train_from_histogram(cannery.Histogram())
    # A workload too small for its own table is skipped; the fleet still trains.
    out = cannery.train({"text": TEXT, "tiny": TEXT[:3]})
    assert "tiny" not in out and "fleet" in out
    with pytest.raises(cannery.InvalidInputError, match="test fraction"):
        cannery.train({"text": TEXT}, test_fraction=1.5)


def test_train_with_report_on_a_snapshot(tmp_path):
    files = cannery.open_corpus(CORPUS)
    tables, report = cannery.train_with_report({"redis": files["redis"]}, peers=False)
    assert set(tables) == {"redis", "fleet"}
    w = report["workloads"][0]
    assert w["name"] == "redis" and w["table_id"] == tables["redis"].id
    assert w["modes"]["canned-fast"]["ratio"] > w["modes"]["fixed"]["ratio"] > 1.0
    assert report["fleet"]["table_id"] == tables["fleet"].id
    # The single-table ceiling: no table codes these pages in fewer bits.
    c = w["ceiling"]
    assert c["pages"] == w["test_pages"]
    assert c["optimal_bits"] <= c["table_bits"] < c["fixed_bits"]
    assert c["ceiling_gain_percent"] >= c["table_gain_percent"] > 0

    # An evaluation sample: fewer held-out pages measured, the same tables.
    sampled, small = cannery.train_with_report({"redis": files["redis"]}, peers=False, eval_pages=50)
    s = small["workloads"][0]
    assert 1 <= s["test_pages"] <= 100 < w["test_pages"]
    assert sampled["redis"].id == tables["redis"].id


def test_evaluate_agrees_with_compressed_sizes():
    t = cannery.Table.kernel_2024()
    pages = TEXT[:20] + STRUCT[:20]
    df = cannery.evaluate(t, {"mixed": pages}, peers=False)
    rows = df.to_dict("records") if hasattr(df, "to_dict") else df
    by_mode = {r["mode"]: r for r in rows}
    assert {"canned-fast", "canned-default", "canned-best", "fixed", "dynamic-fast"} <= set(by_mode)
    fast = by_mode["canned-fast"]
    assert fast["pages"] == 40 and fast["bytes_in"] == 40 * 4096
    assert fast["bytes_out"] == sum(cannery.compressed_sizes(pages, table=t))
    assert math.isclose(fast["ratio"], fast["bytes_in"] / fast["bytes_out"], rel_tol=1e-3)
    assert by_mode["fixed"]["bytes_out"] == sum(cannery.compressed_sizes(pages, mode="fixed"))


def test_evaluate_returns_a_dataframe_with_peers():
    pd = pytest.importorskip("pandas")
    df = cannery.evaluate(cannery.Table.kernel_2024(), {"text": TEXT[:10]})
    assert isinstance(df, pd.DataFrame)
    assert {"workload", "mode", "ratio", "effective_ratio", "incompressible_pages", "pages",
            "bytes_in", "bytes_out"} <= set(df.columns)
    assert any(m.startswith("zstd") for m in df["mode"])


def test_cross_evaluate_diagonal(trained):
    rows = cannery.cross_evaluate(trained, {"text": TEXT, "struct": STRUCT})
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    r = {(x["table"], x["workload"]): x["ratio"] for x in rows}
    assert r[("text", "text")] > r[("struct", "text")]
    assert r[("struct", "struct")] > r[("text", "struct")]
    one = cannery.evaluate(trained["text"], {"text": TEXT}, peers=False)
    one = one.to_dict("records") if hasattr(one, "to_dict") else one
    fast = next(x for x in one if x["mode"] == "canned-fast")
    assert math.isclose(fast["ratio"], r[("text", "text")], rel_tol=1e-6)


def test_train_and_evaluate_report_the_same_effective_ratio():
    # The same table on the same held-out pages gives the same figures in
    # the training report and in evaluate(), as in `cannery train`, `eval`
    # and `bench` (tests/effective_ratio.rs): one definition, with the
    # workload's zero and same-filled pages (also those counted at capture)
    # attributed to the measured pages in their share.
    corpus = str(CORPUS / "node-service")
    tables, report = cannery.train_with_report(corpus, peers=False)
    w = report["workloads"][0]
    trained = w["modes"]["canned-fast"]
    assert trained["effective_ratio"] > trained["ratio"]
    rows = cannery.evaluate(tables["node-service"], corpus, peers=False, part="test")
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    fast = next(x for x in rows if x["mode"] == "canned-fast")
    assert fast["pages"] == w["test_pages"]
    assert fast["ratio"] == trained["ratio"]
    assert fast["effective_ratio"] == trained["effective_ratio"]


def test_train_dictionaries_are_what_zram_and_zstd_load():
    files = cannery.open_corpus(CORPUS)
    dicts = cannery.train_dictionaries({"redis": files["redis"], "jvm": files["jvm-index"]})
    assert set(dicts) == {"redis", "jvm", "fleet"}
    for name, d in dicts.items():
        assert isinstance(d, bytes)
        # zstd's dictionary format, small enough for the kernel's lz4 backend.
        assert d[:4] == bytes([0x37, 0xA4, 0x30, 0xEC]), name
        assert 1024 < len(d) <= 32 * 1024, name
    assert dicts["redis"] != dicts["jvm"]
    # The same split and samples give the same dictionary.
    assert cannery.train_dictionaries({"redis": files["redis"]})["redis"] == dicts["redis"]

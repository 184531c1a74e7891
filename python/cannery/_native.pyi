"""Type stubs for cannery._native, the compiled core of the cannery package.

Hand-written; `python -m mypy.stubtest cannery._native` (run by the test
suite) checks them against the built module. The docstrings are the Rust
sources' (`help()` shows those), copied here for editors that read stubs;
python/tests/test_api.py checks that they match.
"""

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar, Literal, Union, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer, TypeAlias

__all__ = [
    "CanneryError",
    "InvalidInputError",
    "TableError",
    "DecompressError",
    "HistogramError",
    "CorpusError",
    "IncompressibleError",
    "TrainError",
    "CaptureError",
    "ExportError",
    "__version__",
    "PAGE_SIZE",
    "Table",
    "compress_page",
    "decompress_page",
    "compressed_sizes",
    "PageFile",
    "open_pages",
    "open_corpus",
    "capture",
    "export_kernel_header",
    "import_kernel_header",
    "Histogram",
    "train",
    "train_with_report",
    "train_dictionaries",
    "train_from_histogram",
    "_evaluate",
    "_cross_evaluate",
]

__version__: str
PAGE_SIZE: int

# NumPy arrays are listed because numpy's stubs give ndarray `__buffer__`
# only for Python >= 3.12.
_Page: TypeAlias = Union[Buffer, npt.NDArray[np.uint8], npt.NDArray[np.int8]]
_Pages: TypeAlias = Union[_Page, Iterable[_Page]]
_Path: TypeAlias = Union[str, os.PathLike[str]]
_Mode: TypeAlias = Literal["canned", "fixed", "dynamic"]
_Level: TypeAlias = Literal["fast", "default", "best"]
_Format: TypeAlias = Literal["iaa", "deflate"]
_Parse: TypeAlias = Literal["fast", "iaa", "default", "best"]
_Part: TypeAlias = Literal["all", "test", "train"]
# progress(step, done, total), called as each step begins.
_Progress: TypeAlias = Callable[[str, int, int], object]
# A corpus: a directory or page file, or workload name -> path(s) or pages.
_Corpus: TypeAlias = Union[_Path, Mapping[str, Union[_Path, list[_Path], _Pages]]]

class CanneryError(Exception):
    """Base class of every error cannery raises."""
class InvalidInputError(CanneryError, ValueError):
    """An argument has an invalid value (also a ValueError): an unknown mode, a page longer than 4096 bytes, a buffer whose items are not bytes, ..."""
class TableError(InvalidInputError):
    """Code lengths that are no usable table, a table a mode or format cannot use, or a damaged table file."""
class DecompressError(InvalidInputError):
    """Compressed data that is malformed, truncated or too long."""
class HistogramError(InvalidInputError):
    """Malformed histogram data, or histograms gathered with different settings that cannot be merged."""
class CorpusError(InvalidInputError):
    """A snapshot or page file that is damaged or not what it claims."""
class IncompressibleError(CanneryError):
    """The page does not compress below 4096 bytes; zswap would store it raw."""
class TrainError(CanneryError):
    """Training could not produce a table (for example, too few pages)."""
class CaptureError(CanneryError):
    """Capturing pages of a live process failed."""
class ExportError(CanneryError):
    """The table cannot be exported in the requested form."""

@final
class Table:
    """A canned Huffman table: 286 literal/length and 30 distance code lengths.

    Tables are immutable and compare equal when their code lengths are equal
    (names and provenance do not count). Build one with `Table.from_lengths`,
    take a built-in one (`Table.fixed()`, `Table.kernel_2024()`), load one
    (`Table.load`, `Table.from_bytes`), or train one (`cannery.train`).
    """
    BUILTIN_NAMES: ClassVar[list[str]]
    @classmethod
    def from_lengths(
        cls, litlen: Iterable[int] | _Page, dist: Iterable[int] | _Page, *, name: str | None = None
    ) -> Table:
        """Builds a table from 286 literal/length and 30 distance code lengths
        (sequences of integers 0..=15; 0 means "no code"). Raises TableError
        unless a decoder could use the lengths (no over-subscribed code, an
        end-of-block code).
        """
    @classmethod
    def fixed(cls) -> Table:
        """The RFC 1951 fixed code (BTYPE=01) as a table."""
    @classmethod
    def kernel_2024(cls) -> Table:
        """The canned table of the 2024 Linux iaa_crypto patch series."""
    @classmethod
    def builtin(cls, name: str) -> Table:
        """A built-in table by name (see `Table.BUILTIN_NAMES`)."""
    @classmethod
    def load(cls, path: _Path) -> Table:
        """Reads a table file (JSON or the 332-byte binary form, told apart by
        content). Raises TableError for damaged files, OSError if unreadable.
        """
    @classmethod
    def from_bytes(cls, data: _Page) -> Table:
        """Reads a table from the bytes of a table file (JSON or binary)."""
    @classmethod
    def from_json(cls, text: str) -> Table:
        """Reads the JSON form."""
    def save(self, path: _Path, *, format: Literal["json", "binary"] | None = None) -> None:
        """Writes the table to `path`: the 332-byte binary form if `format` is
        "binary" (or is None and the path ends in ".bin"), else JSON.
        """
    def to_json(self) -> str:
        """The JSON form (with name and provenance)."""
    def to_binary(self) -> bytes:
        """The 332-byte binary form (lengths and id only)."""
    def show(self) -> str:
        """A human-readable summary: id, provenance, header size, Kraft sums,
        IAA compatibility and the code-length profile.
        """
    @property
    def id(self) -> str:
        """Stable id: 16 hex digits of SHA-256 over the 316 code lengths."""
    @property
    def name(self) -> str | None:
        """Human name (a workload, "fixed", "kernel-2024"), or None."""
    def with_name(self, name: str | None) -> Table:
        """A copy of the table with another name (tables are immutable)."""
    @property
    def provenance(self) -> dict[str, Any]:
        """Where the table came from, as a dict (source, corpus, created,
        generator, training, ratios); keys that are unknown are absent.
        """
    @property
    def litlen_lengths(self) -> list[int]:
        """The 286 literal/length code lengths (0 = no code)."""
    @property
    def dist_lengths(self) -> list[int]:
        """The 30 distance code lengths (0 = no code)."""
    @property
    def header(self) -> bytes:
        """The implied dynamic block header (BFINAL=1, BTYPE=2), zero-padded to
        whole bytes; `header_bits` says how many bits count. Prepending it to
        a canned IAA body gives a standard raw deflate stream.
        """
    @property
    def header_bits(self) -> int:
        """Exact length of `header` in bits."""
    @property
    def kraft(self) -> tuple[int, int]:
        """Kraft sums (scaled by 2**15) of the literal/length and distance codes;
        32768 means complete.
        """
    def iaa_violations(self) -> list[str]:
        """Every IAA canned-mode rule the table breaks, as messages (empty if none)."""
    @property
    def iaa_compatible(self) -> bool:
        """True if IAA hardware can compress with this table."""
    @property
    def is_standard(self) -> bool:
        """True if standard inflaters accept the table's dynamic header, so
        `format="deflate"` output is plain raw deflate.
        """
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[str]]: ...

def compress_page(
    page: _Page, *, table: Table | None = None, mode: _Mode = "canned", level: _Level = "fast", format: _Format = "iaa"
) -> bytes:
    """Compresses one page (any bytes-like object of at most 4096 bytes).

    `mode` is "canned" (needs `table`), "fixed" or "dynamic" (which ignore
    `table`); `level` is "fast", "default" or "best"; `format` matters for
    canned mode only: "iaa" gives the IAA wire format (body only, no
    header), "deflate" gives standard raw deflate (the table's header, then
    the body). Fixed and dynamic output is always raw deflate.

    Raises IncompressibleError when the output would reach 4096 bytes
    (zswap then stores the page raw), InvalidInputError for bad arguments,
    TableError when the table cannot code every symbol a page may need (or,
    for format="deflate", has a non-standard header).

    Each thread keeps the last encoder it made, so a loop of calls with the
    same arguments builds it once (building one costs more than a page).
    """
def decompress_page(
    data: _Page, *, table: Table | None = None, mode: _Mode = "canned", format: _Format = "iaa"
) -> bytes:
    """Decompresses one page compressed with the same `table`, `mode` and
    `format` (see `compress_page`). Output is limited to 4096 bytes.

    Only canned IAA-format data needs `table`; everything else is standard
    raw deflate and is decoded without one (a given table is ignored).
    Raises DecompressError for malformed, truncated or over-long data.

    Each thread keeps the last decoder it made, so a loop of calls with the
    same table builds its decoding tables once.
    """
def compressed_sizes(
    pages: _Pages,
    *,
    table: Table | None = None,
    mode: _Mode = "canned",
    level: _Level = "fast",
    format: _Format = "iaa",
    workers: int = 1,
) -> npt.NDArray[np.int64]:
    """Compressed size of every page in `pages` (a 2-D uint8 array, a buffer
    of whole 4096-byte pages, or an iterable of pages), with the arguments
    of `compress_page`, as a 1-D NumPy int64 array (one entry per page).
    Incompressible pages count as 4096 bytes, as zswap stores them raw.
    The pages go through the batch path in batches of 32, spread over
    `workers` (1 to 32: the calling thread and `workers - 1` threads of its
    own), with the GIL released; the sizes do not depend on `workers`.
    Raises InvalidInputError for a worker count out of range.
    """
def export_kernel_header(
    table: Table,
    *,
    name: str,
    api: Literal["header-table", "mainline", "builtin"] = "header-table",
    path: _Path | None = None,
) -> str:
    """The C header that registers `table` as an iaa_crypto compression mode
    called `name` (a C identifier, also the prefix of every identifier):
    `ll`/`d` arrays in the kernel's `(length << 15) | code` form, the implied
    block header with its bit count and `gen_decomp_table_flags`, compile-time
    guards and a registration function.

    `api` picks the `add_iaa_compression_mode()` form: "header-table" (the
    10-argument form of the canned patches, the only one in which canned mode
    works end to end), "mainline" (7 arguments; no header) or "builtin" (the
    batching-era driver). If `path` is given the text is also written there.
    Raises ExportError for tables IAA cannot use, InvalidInputError for a
    name that is not a C identifier or an unknown `api`.
    """
def import_kernel_header(text: str) -> Table:
    """Reads a table back from a kernel C header (one written by
    `export_kernel_header`, or the 2024 patch's `canned_ll_iaa` /
    `canned_d_iaa` / `canned_header`), checking that codes, lengths and the
    header agree. Raises TableError if they do not or the text is not such a
    header.
    """

@final
class PageFile:
    """The pages of one snapshot (`.cansnap`) or raw `.pages` file, streamed
    one at a time: iterate it for `bytes` (or NumPy uint8 arrays with
    `numpy=True`, zero-copy views of those bytes), or read the rest at once
    with `read_all()` / `to_numpy()`.
    """
    @property
    def path(self) -> str:
        """The file's path."""
    @property
    def header(self) -> dict[str, Any]:
        """The snapshot header as a dict: version, finalized, counts (scanned,
        stored, zero, same_filled, duplicate, ...), metadata (label, command,
        capture time, kernel release, sampling). Raw files get a synthesized
        header (label = file stem, stored = number of pages).
        """
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __next__(self) -> Any: ...
    def read_all(self) -> bytes:
        """Every remaining page, back to back, as one `bytes` object."""
    def to_numpy(self) -> npt.NDArray[np.uint8]:
        """Every remaining page as a read-only NumPy uint8 array of shape
        (pages, 4096): a zero-copy view of `read_all()`'s bytes.
        """

def open_pages(path: _Path, *, numpy: bool = False) -> PageFile:
    """Opens one snapshot or raw `.pages` file for reading its pages. Raises
    CorpusError for a damaged or foreign file, FileNotFoundError if missing.
    """
def open_corpus(path: _Path) -> dict[str, list[str]]:
    """The workloads of a corpus directory (or page file): name → page files,
    sorted. A bare name such as "fleet-snapshots" is also looked up under
    `corpora/` in the current directory.
    """
def capture(
    pid: int,
    out: _Path,
    *,
    samples: int = 1,
    interval: float = 1.0,
    label: str | None = None,
    children: bool = False,
    freeze: bool = False,
    max_pause: float = 0.5,
    dedup: bool = False,
    max_pages: int | None = None,
    sample_rate: float = 1.0,
    seed: int = 828927532781,
    redact_secrets: bool = False,
    file_private: bool = False,
    level: int = 9,
    force: bool = False,
    progress: _Progress | None = None,
    cold: str | None = None,
    reclaim_own_cgroup: bool = False,
    setup: bool = False,
    keep_hot: _Path | None = None,
) -> dict[str, Any]:
    """Captures the resident anonymous pages of process `pid` into the
    snapshot file `out` and returns its report (path, end reason, the final
    header with page counts, per-sample counts).

    Pages are taken `samples` times, `interval` seconds apart (the first
    after one interval). Options mirror `cannery capture`: `children` (also
    every descendant), `freeze` (stop each process with ptrace while reading
    it, at most `max_pause` seconds), `dedup`, `max_pages`, `sample_rate`,
    `seed`, `redact_secrets` (drop pages that look like secrets),
    `file_private` (also copy-on-write pages of private file mappings) and
    the zstd `level`; `progress`, a callable `progress(step, done, total)`,
    hears each sample taken. An existing file at `out` is kept (FileExistsError)
    unless `force`; a capture that fails or takes no sample writes nothing.
    Snapshots contain raw memory: whatever secrets the
    process held. Needs ptrace access to `pid` (same user and a permissive
    `kernel.yama.ptrace_scope`, or CAP_SYS_PTRACE); raises CaptureError
    otherwise, or if the process is gone.

    `cold="reclaim:50%"` (or `"reclaim:256M"`) captures instead the pages
    the kernel's own reclaim swaps out of the process's memory cgroup, as
    `cannery capture --cold … --pid` does: cgroup v2 only, and only with
    `reclaim_own_cgroup=True` (it reclaims from every process in that
    cgroup); on cgroup v1 it is refused (charges stay where they were
    made). `setup` adds a temporary swap file and enables zswap, undone
    afterwards; `keep_hot` names a second snapshot for the pages still
    resident. Missing prerequisites raise CaptureError naming each fix.
    """

@final
class Histogram:
    """Symbol statistics of many pages (a mergeable, picklable histogram).

    `Histogram(parse="fast")` is the empty histogram; build real ones with
    `Histogram.from_pages` or `Histogram.from_file`, combine them with `+`
    or `sum()`, and turn them into a table with `to_table()` or
    `cannery.train_from_histogram`. Zero and same-filled pages are counted
    apart and never parsed (zswap does not compress them).
    """
    def __new__(cls, parse: _Parse = "fast", *, pricing: Table | None = None) -> Histogram:
        """Create and return a new object.  See help(type) for accurate signature."""
    @classmethod
    def from_pages(cls, pages: _Pages, *, parse: _Parse = "fast", pricing: Table | None = None) -> Histogram:
        """Histogram of `pages` (a 2-D uint8 array, a buffer of whole 4096-byte
        pages, or an iterable of pages), parsed in parallel with the GIL
        released.
        """
    @classmethod
    def from_file(cls, path: _Path, *, parse: _Parse = "fast", pricing: Table | None = None) -> Histogram:
        """Histogram of every page of a snapshot (`.cansnap`) or raw `.pages`
        file, or of a corpus directory, streamed with the GIL released. Same-
        filled pages the snapshot counted at capture are included.
        """
    def merge(self, other: Histogram) -> Histogram:
        """The sum of two histograms (a new histogram). Raises HistogramError
        if they were gathered with different settings.
        """
    def __add__(self, value: Histogram | int, /) -> Histogram: ...
    def __radd__(self, value: Histogram | int, /) -> Histogram: ...
    def to_table(
        self, *, name: str = "fleet", smoothing: str | None = None, qpl_compatible: bool = False,
        all_distances: bool = False
    ) -> Table:
        """A table from this histogram (same as `cannery.train_from_histogram`):
        smoothing, optimal length-limited codes and the IAA checks of the
        trainer. Raises TrainError if it holds too few pages.
        """
    def to_json(self) -> str:
        """The versioned JSON form."""
    @classmethod
    def from_json(cls, text: str) -> Histogram:
        """Reads the JSON form, checking format, version and consistency."""
    def save(self, path: _Path) -> None:
        """Writes the JSON form to `path`."""
    @classmethod
    def load(cls, path: _Path) -> Histogram:
        """Reads a histogram file written by `save` (or `cannery stats`)."""
    @property
    def pages(self) -> int:
        """Pages parsed (each contributed one end-of-block symbol)."""
    @property
    def same_filled_pages(self) -> int:
        """Zero and same-filled pages counted but not parsed."""
    @property
    def parse(self) -> str:
        """Parse model: "fast", "default" or "best"."""
    @property
    def window(self) -> int:
        """History window in bytes."""
    @property
    def pricing_table(self) -> str | None:
        """For the "best" parse, the id of the table that priced it."""
    @property
    def litlen(self) -> list[int]:
        """Counts of literal/length symbols 0..=285."""
    @property
    def dist(self) -> list[int]:
        """Counts of distance symbols 0..=29."""
    @property
    def extra_bits(self) -> int:
        """Extra bits of all lengths and distances."""
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, tuple[str]]: ...

def train(
    corpus: _Corpus,
    *,
    test_fraction: float = 0.2,
    seed: int = 0,
    parse: _Parse = "fast",
    tables: int = 1,
    peers: bool = True,
    smoothing: str | None = None,
    qpl_compatible: bool = False,
    all_distances: bool = False,
    eval_pages: int | None = 1000,
    progress: _Progress | None = None,
) -> dict[str, Table]:
    """Trains one table per workload of `corpus` plus a `"fleet"` table over
    all of them, and returns them by name (workloads with too few pages get
    no table of their own; `tables=K > 1` adds `"cluster-0"` ...).

    `corpus` is a corpus directory or page file (a bare name is looked up
    under `corpora/`), or a dict of workload name -> path, list of paths, or
    pages. Options are those of `cannery train`: `test_fraction` of pages
    held out by content hash (`seed`), `parse` model ("fast", "default",
    "best"), `tables` (K), `peers` (also measure zstd/lz4/libdeflate in the
    report: `train_with_report` only, as `train` returns no report),
    `smoothing` ("add-one", "uniform:M", "prior:M"; None = the parse's
    default: prior:0.005, add-one for a library target), `qpl_compatible`, `all_distances`, `eval_pages` (held-out
    pages evaluated per workload at most, a hash-chosen sample; None = all)
    and `progress`, a callable `progress(step, done, total)` called as each
    step begins (`"scanning redis"`, `"training fleet"`, …; `done` counts
    the steps begun), e.g. `lambda step, done, total: print(done, total,
    step)`, or a tqdm bar's `bar.total = total; bar.update(done - bar.n)`.
    """
def train_with_report(
    corpus: _Corpus,
    *,
    test_fraction: float = 0.2,
    seed: int = 0,
    parse: _Parse = "fast",
    tables: int = 1,
    peers: bool = True,
    smoothing: str | None = None,
    qpl_compatible: bool = False,
    all_distances: bool = False,
    eval_pages: int | None = 1000,
    progress: _Progress | None = None,
) -> tuple[dict[str, Table], dict[str, Any]]:
    """Like `train`, also returning the training report as a dict (held-out
    results per workload and mode, fleet totals, the cross-workload matrix,
    refinement steps, smoothing comparison, targets met or missed) in the
    `cannery train --json` shape. Same arguments and defaults as `train`.
    """
def train_dictionaries(
    corpus: _Corpus,
    *,
    test_fraction: float = 0.2,
    seed: int = 0,
    progress: _Progress | None = None,
) -> dict[str, bytes]:
    """The dictionaries `cannery train` writes (`NAME.dict`, `fleet.dict`), by
    workload name plus `"fleet"`, as bytes: zstd's trainer on the same
    training pages (the same `test_fraction` and `seed` split) as `train`'s
    tables, at most 32 KiB each, in the form zram's `algorithm_params
    dict=` and `zstd -D` load (and the `zstd-1-dict` and `lz4-dict` peers
    use). A workload zstd's trainer cannot learn from has none.
    """
def train_from_histogram(
    histogram: Histogram,
    *,
    name: str = "fleet",
    smoothing: str | None = None,
    qpl_compatible: bool = False,
    all_distances: bool = False,
) -> Table:
    """A table from a histogram (for example the sum of histograms gathered
    on many hosts): the trainer's smoothing, optimal length-limited codes
    and IAA checks. Raises TrainError if it holds too few pages.
    """
def _evaluate(
    table: Table, corpus: _Corpus, *, peers: bool = True, part: _Part = "all", test_fraction: float = 0.2,
    seed: int = 0, eval_pages: int | None = 1000, progress: _Progress | None = None
) -> list[dict[str, Any]]:
    """Rows (one per workload and mode) of evaluating `table` on `corpus`, as
    `cannery eval` does; see `cannery.evaluate`.
    """
def _cross_evaluate(
    tables: dict[str, Table], corpus: _Corpus, *, part: _Part = "all", test_fraction: float = 0.2,
    seed: int = 0
) -> list[dict[str, Any]]:
    """Rows (one per table and workload) of the canned ratio at the fast parse
    of every table on every workload; see `cannery.cross_evaluate`.
    """

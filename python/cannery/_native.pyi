"""Type stubs for cannery._native, the compiled core of the cannery package.

Hand-written; `python -m mypy.stubtest cannery._native` (run by the test
suite) checks them against the built module. Docstrings live in the Rust
sources only.
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

class CanneryError(Exception): ...
class InvalidInputError(CanneryError, ValueError): ...
class TableError(InvalidInputError): ...
class DecompressError(InvalidInputError): ...
class HistogramError(InvalidInputError): ...
class CorpusError(InvalidInputError): ...
class IncompressibleError(CanneryError): ...
class TrainError(CanneryError): ...
class CaptureError(CanneryError): ...
class ExportError(CanneryError): ...

@final
class Table:
    BUILTIN_NAMES: ClassVar[list[str]]
    @classmethod
    def from_lengths(
        cls, litlen: Iterable[int] | _Page, dist: Iterable[int] | _Page, *, name: str | None = None
    ) -> Table: ...
    @classmethod
    def fixed(cls) -> Table: ...
    @classmethod
    def kernel_2024(cls) -> Table: ...
    @classmethod
    def builtin(cls, name: str) -> Table: ...
    @classmethod
    def load(cls, path: _Path) -> Table: ...
    @classmethod
    def from_bytes(cls, data: _Page) -> Table: ...
    @classmethod
    def from_json(cls, text: str) -> Table: ...
    def save(self, path: _Path, *, format: Literal["json", "binary"] | None = None) -> None: ...
    def to_json(self) -> str: ...
    def to_binary(self) -> bytes: ...
    def show(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    def with_name(self, name: str | None) -> Table: ...
    @property
    def provenance(self) -> dict[str, Any]: ...
    @property
    def litlen_lengths(self) -> list[int]: ...
    @property
    def dist_lengths(self) -> list[int]: ...
    @property
    def header(self) -> bytes: ...
    @property
    def header_bits(self) -> int: ...
    @property
    def kraft(self) -> tuple[int, int]: ...
    def iaa_violations(self) -> list[str]: ...
    @property
    def iaa_compatible(self) -> bool: ...
    @property
    def is_standard(self) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[str]]: ...

def compress_page(
    page: _Page, *, table: Table | None = None, mode: _Mode = "canned", level: _Level = "fast", format: _Format = "iaa"
) -> bytes: ...
def decompress_page(
    data: _Page, *, table: Table | None = None, mode: _Mode = "canned", format: _Format = "iaa"
) -> bytes: ...
def compressed_sizes(
    pages: _Pages, *, table: Table | None = None, mode: _Mode = "canned", level: _Level = "fast", format: _Format = "iaa"
) -> npt.NDArray[np.int64]: ...
def export_kernel_header(
    table: Table,
    *,
    name: str,
    api: Literal["header-table", "mainline", "builtin"] = "header-table",
    path: _Path | None = None,
) -> str: ...
def import_kernel_header(text: str) -> Table: ...

@final
class PageFile:
    @property
    def path(self) -> str: ...
    @property
    def header(self) -> dict[str, Any]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __next__(self) -> Any: ...
    def read_all(self) -> bytes: ...
    def to_numpy(self) -> npt.NDArray[np.uint8]: ...

def open_pages(path: _Path, *, numpy: bool = False) -> PageFile: ...
def open_corpus(path: _Path) -> dict[str, list[str]]: ...
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
) -> dict[str, Any]: ...

@final
class Histogram:
    def __new__(cls, parse: _Parse = "fast", *, pricing: Table | None = None) -> Histogram: ...
    @classmethod
    def from_pages(cls, pages: _Pages, *, parse: _Parse = "fast", pricing: Table | None = None) -> Histogram: ...
    @classmethod
    def from_file(cls, path: _Path, *, parse: _Parse = "fast", pricing: Table | None = None) -> Histogram: ...
    def merge(self, other: Histogram) -> Histogram: ...
    def __add__(self, value: Histogram | int, /) -> Histogram: ...
    def __radd__(self, value: Histogram | int, /) -> Histogram: ...
    def to_table(
        self, *, name: str = "fleet", smoothing: str | None = None, qpl_compatible: bool = False,
        all_distances: bool = False
    ) -> Table: ...
    def to_json(self) -> str: ...
    @classmethod
    def from_json(cls, text: str) -> Histogram: ...
    def save(self, path: _Path) -> None: ...
    @classmethod
    def load(cls, path: _Path) -> Histogram: ...
    @property
    def pages(self) -> int: ...
    @property
    def same_filled_pages(self) -> int: ...
    @property
    def parse(self) -> str: ...
    @property
    def window(self) -> int: ...
    @property
    def pricing_table(self) -> str | None: ...
    @property
    def litlen(self) -> list[int]: ...
    @property
    def dist(self) -> list[int]: ...
    @property
    def extra_bits(self) -> int: ...
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
) -> dict[str, Table]: ...
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
) -> tuple[dict[str, Table], dict[str, Any]]: ...
def train_from_histogram(
    histogram: Histogram,
    *,
    name: str = "fleet",
    smoothing: str | None = None,
    qpl_compatible: bool = False,
    all_distances: bool = False,
) -> Table: ...
def _evaluate(
    table: Table, corpus: _Corpus, *, peers: bool = True, part: _Part = "all", test_fraction: float = 0.2,
    seed: int = 0, eval_pages: int | None = 1000, progress: _Progress | None = None
) -> list[dict[str, Any]]: ...
def _cross_evaluate(
    tables: dict[str, Table], corpus: _Corpus, *, part: _Part = "all", test_fraction: float = 0.2,
    seed: int = 0
) -> list[dict[str, Any]]: ...

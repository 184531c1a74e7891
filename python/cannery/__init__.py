"""cannery: train and evaluate canned Huffman tables for Intel IAA deflate
compression of 4 KiB zswap pages, from Python.

Everything here calls the Rust crates through the private ``cannery._native``
module; no compression or training algorithm is implemented in Python. The
optional helpers live in submodules: ``cannery.plot`` (matplotlib) and
``cannery.dask`` (fleet-scale training on a Dask cluster).
"""

from cannery._native import (
    PAGE_SIZE,
    CanneryError,
    CaptureError,
    CorpusError,
    DecompressError,
    ExportError,
    Histogram,
    HistogramError,
    IncompressibleError,
    InvalidInputError,
    PageFile,
    Table,
    TableError,
    TrainError,
    __version__,
    capture,
    compress_page,
    compressed_sizes,
    decompress_page,
    export_kernel_header,
    import_kernel_header,
    open_corpus,
    open_pages,
    train,
    train_from_histogram,
    train_with_report,
    train_dictionaries,
)
from cannery._tabular import cross_evaluate, evaluate

__all__ = [
    "PAGE_SIZE",
    "CanneryError",
    "CaptureError",
    "CorpusError",
    "DecompressError",
    "ExportError",
    "Histogram",
    "HistogramError",
    "IncompressibleError",
    "InvalidInputError",
    "PageFile",
    "Table",
    "TableError",
    "TrainError",
    "__version__",
    "capture",
    "compress_page",
    "compressed_sizes",
    "decompress_page",
    "export_kernel_header",
    "import_kernel_header",
    "open_corpus",
    "open_pages",
    "train",
    "train_from_histogram",
    "train_with_report",
    "train_dictionaries",
    "cross_evaluate",
    "evaluate",
]

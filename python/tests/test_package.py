"""The package surface: public names, the exception hierarchy, the type
stubs (mypy.stubtest against the built module, and mypy --strict on typical
analyst code), and the installed files (py.typed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cannery
import cannery._native as native

PYTHON_DIR = Path(__file__).resolve().parents[1]


def test_public_names_are_exported():
    assert len(set(cannery.__all__)) == len(cannery.__all__)
    for name in cannery.__all__:
        assert hasattr(cannery, name), name
    assert "_native" not in cannery.__all__
    assert cannery.PAGE_SIZE == 4096
    assert cannery.__version__.count(".") == 2


def test_installed_package_is_used_and_typed():
    pkg = Path(cannery.__file__).parent
    assert (pkg / "py.typed").exists()
    assert (pkg / "_native.pyi").exists()


def test_exception_hierarchy():
    invalid = [cannery.InvalidInputError, cannery.TableError, cannery.DecompressError,
               cannery.HistogramError, cannery.CorpusError]
    for cls in invalid:
        assert issubclass(cls, cannery.CanneryError) and issubclass(cls, ValueError), cls
    for cls in (cannery.TableError, cannery.DecompressError, cannery.HistogramError,
                cannery.CorpusError):
        assert issubclass(cls, cannery.InvalidInputError)
    for cls in (cannery.IncompressibleError, cannery.TrainError, cannery.CaptureError,
                cannery.ExportError):
        assert issubclass(cls, cannery.CanneryError) and not issubclass(cls, ValueError), cls
    assert issubclass(cannery.CanneryError, Exception)
    assert cannery.TableError.__doc__
    # Errors pickle (Dask ships them back from workers).
    import pickle

    e = pickle.loads(pickle.dumps(cannery.TableError("boom")))
    assert type(e) is cannery.TableError and str(e) == "boom"


def test_native_module_names_match_stub():
    stub = (PYTHON_DIR / "cannery" / "_native.pyi").read_text()
    for name in native.__all__:
        assert name in stub, name


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_stubtest(tmp_path):
    """Stubs agree with the compiled module (and the package's Python files)."""
    args = [sys.executable, "-m", "mypy.stubtest", "cannery", "--mypy-config-file",
            str(tmp_path / "none.ini")]
    allow = PYTHON_DIR / "stubtest-allowlist.txt"
    if allow.exists():
        args += ["--allowlist", str(allow)]
    (tmp_path / "none.ini").write_text("[mypy]\n")
    r = _run(args, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_on_analyst_code(tmp_path):
    code = textwrap.dedent(
        """
        import numpy as np
        import cannery

        t: cannery.Table = cannery.Table.kernel_2024()
        page = np.zeros(4096, dtype=np.uint8)
        out: bytes = cannery.compress_page(page, table=t, mode="canned", level="best")
        back: bytes = cannery.decompress_page(out, table=t)
        sizes: np.ndarray = cannery.compressed_sizes([page, b"abc"], mode="fixed")
        lengths: list[int] = t.litlen_lengths
        try:
            cannery.compress_page(bytearray(4096), table=t, format="deflate")
        except cannery.IncompressibleError:
            pass
        """
    )
    (tmp_path / "analyst.py").write_text(code)
    r = _run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "analyst.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    (tmp_path / "wrong.py").write_text(
        "import cannery\ncannery.compress_page(b'x', mode='stored')\n"
    )
    r = _run([sys.executable, "-m", "mypy", "--no-incremental", "wrong.py"], tmp_path)
    assert r.returncode == 1 and "stored" in r.stdout, r.stdout


def test_mypy_strict_on_the_package(tmp_path):
    """The package's own Python (plots, Dask recipe, frames) type-checks strictly."""
    r = _run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "-p", "cannery"],
             tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr

"""capture(pid=...): snapshot a child process holding a known pattern and
find the pattern in the captured pages; typed errors for missing processes;
Python's own SIGINT handling survives the capture."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cannery

MARK = b"cannery-capture-test-pattern:"


def ptrace_allowed() -> bool:
    try:
        scope = int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except OSError:
        scope = 0
    return scope <= 1 or os.geteuid() == 0


@pytest.fixture
def child():
    code = (
        "import sys, time\n"
        f"data = [bytearray({MARK!r} + bytes([i]) * 4000) for i in range(64)]\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == b"ready"
    yield p
    p.kill()
    p.wait()
    p.stdout.close()


@pytest.mark.skipif(not ptrace_allowed(), reason="kernel.yama.ptrace_scope forbids reading children")
def test_capture_a_child_and_read_its_pages(tmp_path, child):
    out = tmp_path / "child.cansnap"
    heard = []
    # Whatever SIGINT handler Python has (SIG_IGN when started in the
    # background by a non-interactive shell) must be back afterwards.
    before = signal.getsignal(signal.SIGINT)
    report = cannery.capture(child.pid, out, interval=0.0, label="child", freeze=True,
                             samples=2, progress=lambda *a: heard.append(a))
    assert heard == [("sample 1 of 2", 1, 2), ("sample 2 of 2", 2, 2)]
    assert report["path"] == str(out) and out.exists()
    assert report["header"]["meta"]["label"] == "child"
    assert report["header"]["finalized"] is True
    pages = list(cannery.open_pages(out))
    assert len(pages) == report["header"]["counts"]["stored"] > 0
    found = {p[p.index(MARK) + len(MARK)] for p in pages if MARK in p}
    # The child's 64 buffers each start with the mark; most land in captured pages.
    assert len(found) >= 32
    # Python's handler is back, and with Python's default one SIGINT still
    # raises KeyboardInterrupt.
    assert signal.getsignal(signal.SIGINT) is before
    if before is signal.default_int_handler:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)


def test_capture_of_a_missing_process_is_a_capture_error(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    with pytest.raises(cannery.CaptureError):
        cannery.capture(p.pid, tmp_path / "gone.cansnap", interval=0.0)


def test_capture_argument_checks(tmp_path):
    with pytest.raises(cannery.InvalidInputError):
        cannery.capture(os.getpid(), tmp_path / "x.cansnap", samples=0)
    with pytest.raises(cannery.InvalidInputError):
        cannery.capture(os.getpid(), tmp_path / "x.cansnap", interval=-1.0)
    with pytest.raises(cannery.InvalidInputError):
        cannery.capture(os.getpid(), tmp_path / "x.cansnap", sample_rate=2.0)


def test_cold_capture_checks_its_amount_and_prerequisites(tmp_path, child):
    out = tmp_path / "cold.cansnap"
    with pytest.raises(cannery.InvalidInputError, match="reclaim:AMOUNT"):
        cannery.capture(child.pid, out, cold="50%")
    with pytest.raises(cannery.InvalidInputError, match="percentage"):
        cannery.capture(child.pid, out, cold="reclaim:150%")
    # Attach mode without reclaim_own_cgroup is refused everywhere (and on
    # cgroup v1, or without root, for those reasons too), before anything
    # is changed or written.
    with pytest.raises(cannery.CaptureError, match="cannot capture cold pages here"):
        cannery.capture(child.pid, out, cold="reclaim:50%", interval=0.0)
    assert not out.exists()

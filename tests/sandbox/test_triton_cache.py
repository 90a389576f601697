"""A grade's shared Triton cache: bound read-write into the real bwrap sandbox, handed to
each job's uid, and capped so a submission cannot fill the host's disk through it."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gym.errors import SandboxUnavailable
from gym.sandbox import Job, Limits, available_sandboxes
from gym.sandbox.staging import closed_ancestor, open_cache_to
from gym.sandbox.supervise import ENTRY_BYTES, folder_bytes, size_limit_hit

# Stands in for the worker: what it does is read from /job/in/mode.
FAKE_WORKER = """
import os, sys, time
cache = os.environ["TRITON_CACHE_DIR"]
mode = open("/job/in/mode").read()
if mode == "write":
    os.makedirs(os.path.join(cache, "key1"), exist_ok=True)
    with open(os.path.join(cache, "key1", "launcher.so"), "w") as handle:
        handle.write("compiled once")
elif mode == "read":
    with open("/job/out/seen", "w") as handle:
        handle.write(open(os.path.join(cache, "key1", "launcher.so")).read())
    os.makedirs(os.path.join(cache, "key2"))
elif mode == "flood":
    chunk = b"x" * (1 << 20)
    with open(os.path.join(cache, "flood.bin"), "wb") as flood:
        for _ in range(2000):
            flood.write(chunk)
            flood.flush()
            time.sleep(0.01)
"""


@pytest.fixture
def bwrap(monkeypatch: pytest.MonkeyPatch):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    # Uids apart from test_sandbox.py's (62000 + 100 * worker, 64 each): its leftover checks must not see ours.
    monkeypatch.setenv("KGYM_SANDBOX_UID", str(64000 + 100 * int(worker or 0)))
    sandbox = available_sandboxes()["bwrap"]
    problem = sandbox.check()
    if problem:
        pytest.skip(f"bwrap unavailable: {problem}")
    return sandbox


@pytest.fixture
def cache() -> Iterator[Path]:
    # Straight from mkdtemp: its parent (/tmp) is searchable, as a sandbox uid needs.
    folder = Path(tempfile.mkdtemp(prefix="kgym-triton-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_fake(sandbox, cache: Path, mode: str, limits: Limits | None = None):
    root = Path(tempfile.mkdtemp(prefix="kgym-job-test-"))
    try:
        job = Job.in_folder(root, "cpu", limits, triton_cache=cache)
        package = job.lib_dir / "gym" / "worker"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text(FAKE_WORKER)
        (job.in_dir / "mode").write_text(mode)
        outcome = sandbox.run(job, timeout_s=60)
        seen = (job.out_dir / "seen").read_text() if (job.out_dir / "seen").exists() else None
        return outcome, seen
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_jobs_of_a_grade_share_the_cache_through_the_real_sandbox(bwrap, cache: Path) -> None:
    outcome, _ = run_fake(bwrap, cache, "write")
    assert outcome.exit_code == 0, outcome.stderr_tail
    assert (cache / "key1" / "launcher.so").read_text() == "compiled once"
    outcome, seen = run_fake(bwrap, cache, "read")
    assert outcome.exit_code == 0, outcome.stderr_tail
    assert seen == "compiled once" and (cache / "key2").is_dir()


def test_a_cache_flood_is_cut_off(bwrap, cache: Path) -> None:
    outcome, _ = run_fake(bwrap, cache, "flood", Limits(scratch_bytes=8 << 20))
    assert outcome.limit_hit == "triton_cache" and outcome.exit_code != 0
    assert (cache / "flood.bin").stat().st_size < 200 << 20


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs jobs as other uids")
def test_an_unreachable_cache_is_refused_with_how_to_fix_it(bwrap, tmp_path: Path) -> None:
    # pytest's tmp_path sits in a 0700 folder no sandbox uid can search.
    assert closed_ancestor(tmp_path / "cache") is not None
    with pytest.raises(SandboxUnavailable, match="not searchable"):
        run_fake(bwrap, tmp_path / "cache", "write")


def test_closed_ancestor_finds_the_first_private_folder() -> None:
    open_folder = Path(tempfile.mkdtemp())
    try:
        open_folder.chmod(0o755)
        private = open_folder / "private"
        (private / "a").mkdir(parents=True)
        private.chmod(0o700)
        assert closed_ancestor(private / "a" / "cache") == private.resolve()
        assert closed_ancestor(open_folder / "cache") is None
    finally:
        shutil.rmtree(open_folder)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_the_cache_is_handed_to_the_next_uid_without_following_links(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "key").mkdir(parents=True)
    (cache / "key" / "kernel.so").write_text("x")
    outside = tmp_path / "host-file"
    outside.write_text("host")
    (cache / "link").symlink_to(outside)
    os.link(outside, cache / "hardlink")
    os.mkfifo(cache / "fifo")
    for path in (cache, cache / "key", cache / "key" / "kernel.so"):
        os.lchown(path, 61111, 61111)
    open_cache_to(cache, 61222)
    for path in (cache, cache / "key", cache / "key" / "kernel.so", cache / "link"):
        assert os.lstat(path).st_uid == 61222, path
    assert outside.stat().st_uid == 0, "a link's target must never be given away"
    assert not (cache / "hardlink").exists() and not (cache / "fifo").exists()
    assert outside.read_text() == "host"


def test_the_cache_has_its_own_cap(tmp_path: Path) -> None:
    job = Job.in_folder(tmp_path, "cpu", Limits(scratch_bytes=1 << 20, output_bytes=64 << 20), triton_cache=tmp_path / "cache")
    assert size_limit_hit(job) is None
    (tmp_path / "cache" / "big.bin").write_bytes(b"x" * (2 << 20))
    assert size_limit_hit(job) == "triton_cache"
    (tmp_path / "out" / "huge.bin").write_bytes(b"x" * (65 << 20))
    assert size_limit_hit(job) == "output"


def test_many_empty_entries_are_not_free(tmp_path: Path) -> None:
    for index in range(100):
        (tmp_path / f"f{index}").touch()
    (tmp_path / "deep").mkdir()
    nested = tmp_path / "deep"
    for _ in range(50):
        nested = nested / "d"
        nested.mkdir()
    assert folder_bytes(tmp_path) == (100 + 1 + 50) * ENTRY_BYTES

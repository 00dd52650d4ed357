"""MPICH's shared-memory segments left in /dev/shm by jobs that did not finalize
(run/shm_leftovers.py): which are removed, and that a mapped one never is."""

from __future__ import annotations

import os
import time

from mpi_overlap.run import shm_leftovers


def _segment(shm, name, mtime=None):
    path = shm / f"mpich_shm_{name}_0"
    path.write_bytes(b"\0" * 64)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_segments_no_process_maps_go_and_mapped_ones_stay(tmp_path):
    began = time.time() - 60
    old = _segment(tmp_path, "0ld", mtime=time.time() - 3600)
    orphan, live, fresh = (_segment(tmp_path, n) for n in ("dead", "a11ve", "f7e5h"))
    other = tmp_path / "vader_segment.1"
    other.write_bytes(b"x")
    readings = iter([{str(live)}, {str(live), str(fresh)}])  # fresh mapped at the 2nd
    waited = []
    removed = shm_leftovers.sweep(since=began, shm=tmp_path, maps=lambda: next(readings),
                                  wait=waited.append)
    assert removed == 1 and not orphan.exists()
    assert live.exists() and fresh.exists() and old.exists() and other.exists()
    assert waited == [shm_leftovers.GRACE_S]


def test_nothing_to_remove_reads_no_maps(tmp_path):
    def maps():
        raise AssertionError("/proc read with no segment to remove")
    _segment(tmp_path, "0ld", mtime=time.time() - 3600)
    assert shm_leftovers.sweep(since=time.time() - 60, shm=tmp_path, maps=maps) == 0


def test_a_segment_this_process_maps_is_seen_as_mapped():
    import mmap

    path = shm_leftovers.SHM / f"mpich_shm_motest{os.getpid()}_0"
    try:
        path.write_bytes(b"\0" * 4096)
        with open(path, "r+b") as f, mmap.mmap(f.fileno(), 4096):
            assert str(path) in shm_leftovers.mapped()
        assert str(path) not in shm_leftovers.mapped()
    finally:
        path.unlink(missing_ok=True)

"""What MPICH jobs that do not finalize leave, and its removal (run/mpich_leftovers.py):
Hydra's topology files in /tmp (nothing removed while a proxy runs) and shared-memory
segments in /dev/shm (a mapped one never)."""

from __future__ import annotations

import os
import time

from mpi_overlap.run import mpich_leftovers


def _topology(tmp, name, host, mtime=None):
    path = tmp / f"hydra_hwloc_xmlfile_{name}"
    path.write_text('<?xml version="1.0"?>\n<topology version="2.0">\n'
                    f'  <info name="HostName" value="{host}"/>\n</topology>\n')
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_files_written_since_a_job_began_go_once_no_proxy_runs(tmp_path):
    old = _topology(tmp_path, "old", "vm", mtime=time.time() - 3600)
    new = _topology(tmp_path, "new", "vm")
    other = tmp_path / "unrelated.xml"
    other.write_text("x")
    began = time.time() - 60
    assert mpich_leftovers.sweep_topology(since=began, tmp=tmp_path, running=lambda: True) == 0
    assert new.exists()
    assert mpich_leftovers.sweep_topology(since=began, tmp=tmp_path, running=lambda: False) == 1
    assert not new.exists() and old.exists() and other.exists()


def test_the_clusters_files_are_told_by_their_host_name(tmp_path):
    node = _topology(tmp_path, "a", "mo-node2", mtime=time.time() - 3600)
    here = _topology(tmp_path, "b", "vm")
    bare = tmp_path / "hydra_hwloc_xmlfile_c"
    bare.write_text("not a topology")
    removed = mpich_leftovers.sweep_topology(host=lambda h: h.startswith("mo-node"),
                                             tmp=tmp_path, running=lambda: False)
    assert removed == 1 and not node.exists() and here.exists() and bare.exists()
    assert mpich_leftovers.host_of(here) == "vm" and mpich_leftovers.host_of(bare) is None


def test_a_live_proxy_counts_and_a_zombie_does_not(monkeypatch):
    procs = [(12, "bash", ["S", "1"]), (34, "hydra_pmi_proxy", ["Z", "1"])]
    monkeypatch.setattr(mpich_leftovers, "proc_stats", lambda: iter(procs))
    assert not mpich_leftovers.proxies_running()
    procs.append((56, "hydra_pmi_proxy", ["S", "1"]))
    assert mpich_leftovers.proxies_running()


def test_no_file_no_scan(tmp_path):
    def scan():
        raise AssertionError("/proc read with no file to remove")
    assert mpich_leftovers.sweep_topology(tmp=tmp_path, running=scan) == 0


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
    removed = mpich_leftovers.sweep_segments(since=began, shm=tmp_path,
                                             maps=lambda: next(readings), wait=waited.append)
    assert removed == 1 and not orphan.exists()
    assert live.exists() and fresh.exists() and old.exists() and other.exists()
    assert waited == [mpich_leftovers.GRACE_S]


def test_nothing_to_remove_reads_no_maps(tmp_path):
    def maps():
        raise AssertionError("/proc read with no segment to remove")
    _segment(tmp_path, "0ld", mtime=time.time() - 3600)
    assert mpich_leftovers.sweep_segments(since=time.time() - 60, shm=tmp_path, maps=maps) == 0


def test_a_segment_this_process_maps_is_seen_as_mapped():
    import mmap

    path = mpich_leftovers.SHM / f"mpich_shm_motest{os.getpid()}_0"
    try:
        path.write_bytes(b"\0" * 4096)
        with open(path, "r+b") as f, mmap.mmap(f.fileno(), 4096):
            assert str(path) in mpich_leftovers.mapped()
        assert str(path) not in mpich_leftovers.mapped()
    finally:
        path.unlink(missing_ok=True)

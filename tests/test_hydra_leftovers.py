"""MPICH Hydra's topology files left in /tmp by aborted jobs (run/hydra_leftovers.py):
which are removed, and that nothing is while a proxy runs."""

from __future__ import annotations

import os
import time

from mpi_overlap.run import hydra_leftovers


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
    assert hydra_leftovers.sweep(since=began, tmp=tmp_path, running=lambda: True) == 0
    assert new.exists()
    assert hydra_leftovers.sweep(since=began, tmp=tmp_path, running=lambda: False) == 1
    assert not new.exists() and old.exists() and other.exists()


def test_the_clusters_files_are_told_by_their_host_name(tmp_path):
    node = _topology(tmp_path, "a", "mo-node2", mtime=time.time() - 3600)
    here = _topology(tmp_path, "b", "vm")
    bare = tmp_path / "hydra_hwloc_xmlfile_c"
    bare.write_text("not a topology")
    removed = hydra_leftovers.sweep(host=lambda h: h.startswith("mo-node"), tmp=tmp_path,
                                    running=lambda: False)
    assert removed == 1 and not node.exists() and here.exists() and bare.exists()
    assert hydra_leftovers.host_of(here) == "vm" and hydra_leftovers.host_of(bare) is None


def test_a_live_proxy_counts_and_a_zombie_does_not(monkeypatch):
    procs = [(12, "bash", ["S", "1"]), (34, "hydra_pmi_proxy", ["Z", "1"])]
    monkeypatch.setattr(hydra_leftovers, "proc_stats", lambda: iter(procs))
    assert not hydra_leftovers.proxies_running()
    procs.append((56, "hydra_pmi_proxy", ["S", "1"]))
    assert hydra_leftovers.proxies_running()


def test_no_file_no_scan(tmp_path):
    def scan():
        raise AssertionError("/proc read with no file to remove")
    assert hydra_leftovers.sweep(tmp=tmp_path, running=scan) == 0

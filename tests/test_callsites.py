"""Call sites (docs/profiler.md, "Call sites"): known-answer programs in C
(native/tests/callsites.c) and Fortran (native/tests/fortran/f_callsites.f90), built with -g,
post and complete their transfers on lines marked "site: NAME"; the profile must name those
lines and count the transfers of every (posting line → completing line) pair exactly. Also
the resolution of addresses without a profile run: PIE offsets, no addr2line, no mapping.

Exact counts per rank, from the programs' header comments: C — irecv-a → waitall-a and
isend-a → waitall-a 5 each, isend-b → wait-send-b and irecv-b → wait-recv-b 3 each,
sendrecv → sendrecv 4 (a send and a receive per call, 2 calls), irecv-c1/c2 →
waitall-c-recv 2 each, isend-helper → waitall-c-send 4 (2 per helper call line with
--callsite-depth 2); Fortran the first four.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain, list_toolchains
from mpi_overlap.profile.analysis.callsites import site_rankings
from mpi_overlap.profile.documents import job_stats
from mpi_overlap.profile.documents.callsites import resolve
from mpi_overlap.run.rundir import load_run
from test_profile_fortran import fortran_program

NATIVE_TESTS = Path(__file__).resolve().parent.parent / "native" / "tests"
C_SOURCE = NATIVE_TESTS / "callsites.c"
F_SOURCE = NATIVE_TESTS / "fortran" / "f_callsites.f90"
A_ITERS, B_ITERS, SR_ITERS, C_ITERS = 5, 3, 2, 2
# (posting mark, completing mark) -> transfers per rank
PAIRS = {
    ("irecv-a", "waitall-a"): A_ITERS,
    ("isend-a", "waitall-a"): A_ITERS,
    ("isend-b", "wait-send-b"): B_ITERS,
    ("irecv-b", "wait-recv-b"): B_ITERS,
}
C_PAIRS = {**PAIRS, ("sendrecv", "sendrecv"): 2 * SR_ITERS,
           ("irecv-c1", "waitall-c-recv"): C_ITERS, ("irecv-c2", "waitall-c-recv"): C_ITERS,
           ("isend-helper", "waitall-c-send"): 2 * C_ITERS}


def marked_lines(source: Path) -> dict[str, int]:
    """{mark: line number} of the "site: NAME" comments of a source file."""
    out = {}
    for number, text in enumerate(source.read_text().splitlines(), start=1):
        m = re.search(r"site: ([a-z0-9-]+)\s*(\*/)?\s*$", text)
        if m:
            out[m.group(1)] = number
    return out


def _profile(tmp_path: Path, toolchain: str, program: Path, *extra: str):
    out = tmp_path / "runs"
    proc = run_cli("profile", "--mpi", toolchain, "-n", "2", "--out", str(out), *extra, "--",
                   str(program), timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = load_run(next(p for p in out.iterdir() if (p / "run.json").is_file()))
    assert run.result["status"] == "complete"
    return run, proc


def _pairs_by_line(doc: dict, source: Path) -> dict[tuple[int, int], int]:
    """{(posting line, completing line): transfers} of one rank, for sites in `source`."""
    sites = {s["id"]: s for s in doc["profile"]["sites"]}
    out: dict[tuple[int, int], int] = {}
    for p in doc["profile"]["pairs"]:
        post, end = sites.get(p["post"]), sites.get(p["end"])
        if not post or not end or Path(post["file"] or "").name != source.name:
            continue
        key = (post["line"], end["line"])
        out[key] = out.get(key, 0) + p["transfers"]
    return out


def _check_known_answer(run, source: Path, expected: dict[tuple[str, str], int]) -> None:
    lines = marked_lines(source)
    want = {(lines[a], lines[b]): n for (a, b), n in expected.items()}
    for doc in run.result["ranks"]:
        assert _pairs_by_line(doc, source) == want, doc["rank"]
        c = doc["profile"]["counters"]
        assert c["site_overflow"] == 0 and c["pair_overflow"] == 0
    # The job's ranking names the lines, summed over both ranks.
    ranked = {(e["post"], e["end"]): e["transfers"] for e in run.analysis["rankings"]["pairs"]}
    for (a, b), n in expected.items():
        hits = [t for (post, end), t in ranked.items()
                if post.startswith(f"{source.name}:{lines[a]} ")
                and end.startswith(f"{source.name}:{lines[b]} ")]
        assert hits == [2 * n], (a, b, ranked)
    # Every site in the program itself has its line (an MPI's own Fortran MPI_INIT calls the
    # C one from its library, which has no debug information: that site may have none).
    for doc in run.result["ranks"]:
        for site in doc["profile"]["sites"]:
            if site["object"] and Path(site["object"]).name == source.stem:
                assert site["line"], site


@pytest.mark.mpi
def test_c_program_names_its_lines(tmp_path):
    tc = get_toolchain("mpich")
    ensure_built(tc)
    program = build_dir_for(tc) / "tests" / "callsites"
    run, proc = _profile(tmp_path, "mpich", program)
    _check_known_answer(run, C_SOURCE, C_PAIRS)
    lines = marked_lines(C_SOURCE)
    # Two call paths posting from different lines: two pairs each, not one.
    posts = {e["post"] for e in run.analysis["rankings"]["pairs"]}
    assert any(p.startswith(f"callsites.c:{lines['isend-a']} (path_a)") for p in posts)
    assert any(p.startswith(f"callsites.c:{lines['isend-b']} (path_b)") for p in posts)
    # The terminal table and the HTML report name them too.
    text = proc.stdout + proc.stderr
    assert "call sites: posted at → completed at" in text
    assert f"callsites.c:{lines['waitall-a']}" in text
    html = (run.path / "report.html").read_text()
    assert f"callsites.c:{lines['wait-recv-b']} (path_b)" in html


@pytest.mark.mpi
def test_a_deeper_call_site_tells_a_helpers_callers_apart(tmp_path):
    """--callsite-depth 2: the helper's MPI_Isend is two chains, one per line that calls
    it, each with its own transfers; every other pair keeps its innermost line."""
    tc = get_toolchain("mpich")
    ensure_built(tc)
    run, _ = _profile(tmp_path, "mpich", build_dir_for(tc) / "tests" / "callsites",
                      "--callsite-depth", "2")
    lines = marked_lines(C_SOURCE)
    helper = f"callsites.c:{lines['isend-helper']} (isend_helper)"
    for doc in run.result["ranks"]:
        assert _pairs_by_line(doc, C_SOURCE) == {
            (marked_lines(C_SOURCE)[a], marked_lines(C_SOURCE)[b]): n
            for (a, b), n in C_PAIRS.items()}  # by innermost line: as at depth 1
        sites = {s["id"]: s for s in doc["profile"]["sites"]}
        chains = {}
        for p in doc["profile"]["pairs"]:
            label = sites[p["post"]]["label"] if p["post"] in sites else ""
            if label.startswith(helper + " ← "):
                chains[label] = chains.get(label, 0) + p["transfers"]
        assert chains == {f"{helper} ← callsites.c:{lines[c]} (path_c)": C_ITERS
                          for c in ("helper-call-1", "helper-call-2")}, chains
        assert all(len(sites[i]["frames"]) == 2 for i in sites if i)


def _fortran_toolchains() -> list:
    present = {tc.name for tc in list_toolchains()}
    return [pytest.param(name, id=name, marks=[] if name in present else [pytest.mark.skip(
        reason=f"toolchain '{name}' not registered (make toolchains registers it where "
               "Debian's MPI packages and gfortran are installed)")])
        for name in ("system-mpi", "debian-mpich")]


@pytest.mark.mpi
@pytest.mark.parametrize("toolchain", _fortran_toolchains())
def test_fortran_program_names_its_lines(tmp_path, toolchain):
    run, _ = _profile(tmp_path, toolchain, fortran_program(toolchain, "f_callsites"))
    _check_known_answer(run, F_SOURCE, PAIRS)


# ---------------------------------------------------------------- without a profile run


def _doc(sites: list[dict], maps: list[dict]) -> dict:
    return {"rank": 0, "maps": maps, "profile": {"sites": sites, "pairs": []}}


def _python_text_mapping() -> tuple[str, int, int]:
    """(path, start, offset) of an executable mapping of this Python process."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 6 and "x" in parts[1] and parts[5].startswith("/"):
            start = int(parts[0].split("-")[0], 16)
            return parts[5], start, int(parts[2], 16)
    pytest.skip("no executable file mapping in /proc/self/maps")


def test_addresses_resolve_through_the_mapping_and_the_segment():
    path, start, offset = _python_text_mapping()
    addr = start + 0x40
    doc = _doc([{"id": 1, "addr": f"{addr:#x}", "fn": "MPI_Send", "calls": 1, "call_s": 0.0}],
               [{"start": f"{start:#x}", "end": f"{start + 0x1000:#x}",
                 "offset": f"{offset:#x}", "path": path}])
    done = resolve(doc, tool="")  # no addr2line: object + ELF virtual address
    site = doc["profile"]["sites"][0]
    assert site["object"] == path
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        seg = next(s for s in ELFFile(f).iter_segments()
                   if s["p_type"] == "PT_LOAD" and s["p_offset"] <= offset + 0x40
                   < s["p_offset"] + s["p_filesz"])
    vaddr = offset + 0x40 - seg["p_offset"] + seg["p_vaddr"]
    assert site["vaddr"] == f"{vaddr:#x}"
    assert site["label"] == f"{Path(path).name}+{vaddr:#x}"
    assert site["line"] is None
    assert done["sites"] == 1 and done["with_line"] == 0
    assert "addr2line" in done["note"]


@pytest.mark.skipif(shutil.which("addr2line") is None, reason="binutils' addr2line not installed")
def test_a_binary_without_debug_information_falls_back_to_function_names():
    path, start, offset = _python_text_mapping()
    doc = _doc([{"id": 1, "addr": f"{start + 0x40:#x}", "fn": "MPI_Send", "calls": 1,
                 "call_s": 0.0}],
               [{"start": f"{start:#x}", "end": f"{start + 0x1000:#x}",
                 "offset": f"{offset:#x}", "path": path}])
    done = resolve(doc)
    site = doc["profile"]["sites"][0]
    if site["line"] is not None:
        pytest.skip(f"{path} has debug information here")
    assert site["label"].endswith(Path(path).name) or "+0x" in site["label"]
    assert "debug information" in done["note"]


def test_one_resolver_asks_addr2line_once_per_site_of_a_job(monkeypatch):
    """Two ranks of one binary mapped at other addresses (ASLR): the second rank's sites
    have the same object and virtual addresses, and come from the first's answer."""
    from mpi_overlap.profile.documents import callsites

    path, start, offset = _python_text_mapping()
    asked: list[list[int]] = []

    def fake_addr2line(obj, vaddrs, tool):
        asked.append(list(vaddrs))
        return [(f"fn{v:#x}", "/src/app.c", 10 + i) for i, v in enumerate(vaddrs)]

    monkeypatch.setattr(callsites, "_addr2line", fake_addr2line)
    resolver = callsites.Resolver(tool="addr2line")
    docs = []
    for base in (start, start + 0x200000):  # the same mapping, elsewhere in memory
        docs.append(_doc(
            [{"id": i + 1, "addr": f"{base + 0x40 + 8 * i:#x}", "fn": "MPI_Send", "calls": 1,
              "call_s": 0.0} for i in range(3)],
            [{"start": f"{base:#x}", "end": f"{base + 0x1000:#x}", "offset": f"{offset:#x}",
              "path": path}]))
    done = [resolver.resolve(d) for d in docs]
    assert len(asked) == 1 and len(asked[0]) == 3  # the first rank's three sites, once
    assert [s["label"] for s in docs[0]["profile"]["sites"]] == \
        [s["label"] for s in docs[1]["profile"]["sites"]] == \
        [f"app.c:{10 + i} (fn{v:#x})" for i, v in enumerate(asked[0])]
    assert done[0] == done[1] == {"sites": 3, "with_line": 3, "note": None}


def test_an_address_outside_every_mapping_stays_an_address():
    doc = _doc([{"id": 3, "addr": "0x1234", "fn": "MPI_Wait", "calls": 2, "call_s": 0.0}], [])
    resolve(doc, tool=sys.executable)  # never reached: no mapping holds the address
    site = doc["profile"]["sites"][0]
    assert site["label"] == "0x1234" and site["object"] is None


def test_ranks_with_other_addresses_meet_at_the_same_line():
    def rank(r: int, base: int) -> dict:
        return {"rank": r, "profile": {
            "sites": [{"id": 1, "addr": f"{base:#x}", "fn": "MPI_Isend", "calls": 4,
                       "call_s": 1e-6, "label": "halo.c:42 (exchange)"},
                      {"id": 2, "addr": f"{base + 64:#x}", "fn": "MPI_Wait", "calls": 4,
                       "call_s": 3e-6, "label": "halo.c:57 (exchange)"}],
            "pairs": [{"post": 1, "end": 2, "transfers": 4, "xfer_s": 4e-6, "min_s": 0.0,
                       "max_s": 1e-6, "nonoverlap_s": 3e-6},
                      {"post": 0, "end": 2, "transfers": 1, "xfer_s": 1e-6, "min_s": 0.0,
                       "max_s": 1e-6, "nonoverlap_s": 0.0}]}}

    docs = [rank(0, 0x55550000), rank(1, 0x7f000000)]
    ranked = site_rankings(job_stats.reduce_documents(docs, len(docs)))
    top = ranked["pairs"][0]
    assert (top["post"], top["end"], top["transfers"]) == \
        ("halo.c:42 (exchange)", "halo.c:57 (exchange)", 8)
    assert (top["post_fn"], top["end_fn"]) == ("MPI_Isend", "MPI_Wait")
    assert top["nonoverlap_s"] == pytest.approx(6e-6) and top["ranks"] == 2
    unknown = next(e for e in ranked["pairs"] if e["post"] == "unknown")
    assert unknown["transfers"] == 2
    ends = {e["site"]: e for e in ranked["end_sites"]}
    assert ends["halo.c:57 (exchange)"]["transfers"] == 10
    assert ends["halo.c:57 (exchange)"]["calls"] == 8


def test_places_sharing_a_label_merge_from_the_library_s_file():
    """Two places of the library's statistics that resolve to one label (no line
    information: the function's name alone) merge into one entry, also where no rank lost
    time there and the file names no worst rank (a wheel built without -g)."""
    def pair(post: str, lost: float) -> dict:
        return {"post": post, "post_fn": "MPI_Bcast", "end": post, "end_fn": "MPI_Bcast",
                "polled": 0, "transfers": 1, "xfer_s": 1e-6, "min_s": 0.0,
                "max_s": 1e-6 - lost, "nonoverlap_s": lost, "ranks": 1,
                "worst_rank": 0 if lost else None, "worst_s": lost}

    doc = {"ranks": 1, "ranks_with_data": 1, "totals": {}, "cases": {}, "counters": {},
           "cases_ranks": {}, "counters_ranks": {}, "by_bin": [], "by_function": [],
           "by_region": [], "checks": {"in_call": {}, "across_calls": {}, "beyond_s": 0.0,
                                       "by_function": [], "by_bin": []},
           "sites": [{"site": p, "fn": "MPI_Bcast", "calls": 1, "call_s": 1e-6, "ranks": 1}
                     for p in ("/bin/app+0x10", "/bin/app+0x20")],
           "post_sites": [], "end_sites": [],
           "pairs": [pair("/bin/app+0x10", 0.0), pair("/bin/app+0x20", 0.0)],
           "site_labels": {"/bin/app+0x10": "main in app", "/bin/app+0x20": "main in app"}}
    (entry,) = site_rankings(job_stats.from_file(doc))["pairs"]
    assert (entry["post"], entry["transfers"], entry["worst_rank"]) == ("main in app", 2, None)


@pytest.mark.mpi
def test_the_mini_apps_name_their_lines(tmp_path):
    """The native build has debug information (-g, no change to the code): a profile of
    mo_halo's overlap mode names grid.c's MPI_Irecv and MPI_Isend lines as the posting
    sites of transfers that one of halo.c's MPI_Waitall lines completes."""
    tc = get_toolchain("mpich")
    ensure_built(tc)
    program = build_dir_for(tc) / "bench" / "mo_halo"
    out = tmp_path / "runs"
    proc = run_cli("profile", "-n", "2", "--no-report", "--out", str(out), "--", str(program),
                   "--modes", "overlap", "--iterations", "20", "--grid", "32", "--quick",
                   timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = load_run(next(p for p in out.iterdir() if (p / "run.json").is_file()))
    apps = NATIVE_TESTS.parent / "apps"
    text = (apps / "grid.c").read_text().splitlines()
    irecv = next(i for i, t in enumerate(text, 1) if "MPI_Irecv(" in t)
    isend = next(i for i, t in enumerate(text, 1) if "MPI_Isend(" in t)
    waits = {i for i, t in enumerate((apps / "halo.c").read_text().splitlines(), 1)
             if "MPI_Waitall(" in t}
    pairs = run.analysis["rankings"]["pairs"]
    posted = {e["post"].split(" ")[0] for e in pairs if e["end"].startswith("halo.c:")
              and int(e["end"].split(":")[1].split(" ")[0]) in waits}
    assert {f"grid.c:{irecv}", f"grid.c:{isend}"} <= posted, pairs

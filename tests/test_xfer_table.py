"""The transfer-time table file: format round trip (version 3: verdict, point quality,
unmeasured sizes, `end`), older versions read as unverified, files cut short refused,
interpolation and extrapolation, refusal of unknown versions and of tables made for
another machine or toolchain, the content hash, and the CLI's one-line errors for bad
calibrate input (no MPI needed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_helpers import run_cli
from mpi_overlap.calibration.xfer_table import (
    OVERRIDE_HINT,
    PointQuality,
    XferTable,
    check_fits,
    content_hash,
    format_table,
    interpolate,
    parse_table,
    read_table,
    render_table,
    table_path,
    write_table,
)
from mpi_overlap.core.errors import UserError

MACHINE_FP, TOOLCHAIN_FP = "8ed7a84a831c0023", "84c572b3ef7e2a15"
MACHINE_KEY = "cpu=AMD EPYC;ncpu=2"
TOOLCHAIN_KEY = "MPICH Version: 5.0.2 MPICH Release date: Fri Sep 25 2026"


def _size(nbytes: int, t: float | None, clean: int = 16, disturbed: int = 4) -> dict:
    """A size of a pingpong result: `clean` undisturbed samples of exactly t (so the
    estimate is t) and `disturbed` samples 50 times slower with a CPU share of 0.3; no
    samples at all when t is None."""
    samples = [] if t is None else [t] * clean + [50 * t] * disturbed
    shares = [] if t is None else [1.0] * clean + [0.3] * disturbed
    return {"bytes": nbytes, "one_way_s": t, "samples": len(samples), "iterations": 10,
            "min_s": t, "mean_s": t, "max_s": t, "ci_lo_s": t, "ci_hi_s": t,
            "samples_s": samples, "cpu_share": shares}


def _result(inter: bool = False) -> dict:
    pairs = [{"class": "intra", "ranks": [0, 1], "hosts": ["a", "a"], "complete": True,
              "sizes": [_size(0, 2.875e-7), _size(1, 2.9e-7), _size(1024, 1.0e-6),
                        _size(1 << 20, 1.2e-4)]}]
    if inter:
        pairs.append({"class": "inter", "ranks": [0, 2], "hosts": ["a", "b"], "complete": True,
                      "sizes": [_size(0, 1.2e-6), _size(1 << 20, 9.0e-5)]})
    return {
        "benchmark": "pingpong",
        "provenance": {"ranks": 4 if inter else 2},
        "results": {"pairs": pairs, "ranks": 4 if inter else 2, "nodes": 2 if inter else 1,
                    "machine_key": MACHINE_KEY, "machine_fp": MACHINE_FP,
                    "toolchain_key": TOOLCHAIN_KEY, "toolchain_fp": TOOLCHAIN_FP},
    }


def _table(points: dict[str, list[tuple[int, float]]]) -> XferTable:
    return XferTable(machine_fp=MACHINE_FP, machine_key=MACHINE_KEY, toolchain_fp=TOOLCHAIN_FP,
                     toolchain_key=TOOLCHAIN_KEY, toolchain_name="mpich", ranks=2, nodes=1,
                     created="2026-01-01T00:00:00Z", points=points)


# ----- format -----------------------------------------------------------------------------

QUALITY_HEADER = ("# class bytes seconds verdict estimate_s spread undisturbed samples "
                  "lo_s hi_s (seconds: the monotone fit)")


def test_format_is_the_documented_one() -> None:
    text = format_table(_result(), "mpich", created="2026-01-01T00:00:00Z")
    assert text.splitlines() == [
        "mpi-overlap-xfer-table 4",
        "created 2026-01-01T00:00:00Z",
        f"machine {MACHINE_FP} {MACHINE_KEY}",
        f"toolchain {TOOLCHAIN_FP} {TOOLCHAIN_KEY}",
        "toolchain_name mpich",
        "ranks 2 nodes 1",
        "verdict ok 4 sizes, 64 of 80 samples undisturbed",
        QUALITY_HEADER,
        # identical samples: the interval is the estimate itself
        "intra 0 2.875e-07 ok 2.875e-07 0 16 20 2.875e-07 2.875e-07",
        "intra 1 2.9e-07 ok 2.9e-07 0 16 20 2.9e-07 2.9e-07",
        "intra 1024 1e-06 ok 1e-06 0 16 20 1e-06 1e-06",
        "intra 1048576 0.00012 ok 0.00012 0 16 20 0.00012 0.00012",
        "end",
    ]


def test_unmeasured_sizes_are_listed_not_points() -> None:
    res = _result()
    res["results"]["pairs"][0]["sizes"] += [_size(2048, None), _size(4096, 3e-6, clean=2)]
    text = format_table(res, "mpich", created="2026-01-01T00:00:00Z")
    lines = text.splitlines()
    assert lines[-4:] == ["# unmeasured class bytes undisturbed samples",
                          "unmeasured intra 2048 0 0", "unmeasured intra 4096 2 6", "end"]
    assert lines[6].startswith("verdict noisy not measured (too few undisturbed samples, "
                               "left out) at 2 KiB–4 KiB")
    table = parse_table(text)
    assert table.unmeasured == {"intra": [(2048, 0, 0), (4096, 2, 6)]}
    assert [b for b, _ in table.points["intra"]] == [0, 1, 1024, 1 << 20]
    assert render_table(table) == text


@pytest.mark.parametrize("inter", [False, True])
def test_round_trip(tmp_path: Path, inter: bool) -> None:
    path = write_table(tmp_path / "sub" / "t.table", _result(inter), "mpich")
    table = read_table(path)
    assert table.path == path
    assert (table.machine_fp, table.machine_key) == (MACHINE_FP, MACHINE_KEY)
    assert (table.toolchain_fp, table.toolchain_key) == (TOOLCHAIN_FP, TOOLCHAIN_KEY)
    assert table.toolchain_name == "mpich" and table.version == 4
    assert table.verdict == "ok" and table.verdict_reason.startswith(
        "6 sizes" if inter else "4 sizes")
    assert table.quality[("intra", 1024)] == PointQuality("ok", 1e-6, 0.0, 16, 20, 1e-6, 1e-6)
    assert table.content_hash == content_hash(path.read_bytes())
    assert (table.ranks, table.nodes) == ((4, 2) if inter else (2, 1))
    assert table.created.endswith("Z")
    assert table.points["intra"] == [(0, 2.875e-7), (1, 2.9e-7), (1024, 1e-6), (1 << 20, 1.2e-4)]
    assert table.classes == (["intra", "inter"] if inter else ["intra"])
    if inter:
        assert table.points["inter"] == [(0, 1.2e-6), (1 << 20, 9.0e-5)]
        assert table.lookup(0, "inter") == 1.2e-6
    else:
        with pytest.raises(UserError, match="no inter-node points"):
            table.lookup(0, "inter")
    assert not list(tmp_path.glob("sub/*.table.*")), "no temporary file left behind"


def test_comments_and_blank_lines_are_ignored() -> None:
    text = format_table(_result(), "mpich").replace("intra 1 ", "\n# note\nintra 1 ")
    assert parse_table(text).points["intra"][1] == (1, 2.9e-7)


def test_table_path_is_in_the_state_dir(isolated_home: Path) -> None:
    assert table_path("openmpi", MACHINE_FP, TOOLCHAIN_FP) == (
        isolated_home / "xfer-tables" / f"openmpi-{MACHINE_FP}-{TOOLCHAIN_FP}.table")


def test_a_result_without_points_is_refused() -> None:
    res = _result()
    res["results"]["pairs"][0]["sizes"] = []
    with pytest.raises(UserError, match="no measured sizes"):
        format_table(res, "mpich")
    res["results"]["pairs"][0]["sizes"] = [_size(0, None), _size(1, 1e-6, clean=1)]
    with pytest.raises(UserError, match="too few undisturbed samples at every size"):
        format_table(res, "mpich")


def test_version_2_is_read_as_unverified() -> None:
    v2 = "\n".join(["mpi-overlap-xfer-table 2", "created 2026-01-01T00:00:00Z",
                    f"machine {MACHINE_FP} {MACHINE_KEY}",
                    f"toolchain {TOOLCHAIN_FP} {TOOLCHAIN_KEY}", "toolchain_name mpich",
                    "ranks 2 nodes 1", "# class bytes seconds", "intra 0 1e-06",
                    "intra 1024 2e-06"]) + "\n"
    table = parse_table(v2)
    assert table.version == 2 and table.verdict == "unverified"
    assert "format version 2 has no quality verdict" in table.verdict_reason
    assert table.points["intra"] == [(0, 1e-6), (1024, 2e-6)] and table.quality == {}
    # a verdict line, quality fields and `end` are version 3 only
    for extra in ("verdict ok fine\n", "intra 2048 3e-06 ok 3e-06 0 1 1\n", "end\n"):
        with pytest.raises(UserError):
            parse_table(v2 + extra)


def test_content_hash_is_fnv1a_64() -> None:
    # FNV-1a 64 test vectors (the C library computes the same over the file's bytes)
    assert content_hash(b"") == "cbf29ce484222325"
    assert content_hash("a") == "af63dc4c8601ec8c"
    assert content_hash("foobar") == "85944171f73967e8"


# ----- lookup -----------------------------------------------------------------------------

def test_interpolation_and_extrapolation() -> None:
    table = _table({"intra": [(64, 1e-6), (1024, 2e-6), (2048, 4e-6)]})
    assert table.lookup(0) == 1e-6  # below the first point: its time
    assert table.lookup(64) == 1e-6
    assert table.lookup(544) == pytest.approx(1.5e-6)
    assert table.lookup(1024) == 2e-6
    assert table.lookup(1536) == pytest.approx(3e-6)
    assert table.lookup(2048) == 4e-6
    assert table.lookup(4096) == pytest.approx(8e-6)  # last segment's slope, 2e-6 per KiB
    assert _table({"intra": [(0, 5e-7)]}).lookup(1 << 30) == 5e-7  # one point: constant
    # A falling last segment is not continued downwards.
    assert _table({"intra": [(0, 2e-6), (1024, 1e-6)]}).lookup(1 << 20) == 1e-6
    with pytest.raises(ValueError):
        table.lookup(-1)


@st.composite
def _monotone_points(draw) -> list[tuple[int, float]]:
    sizes = sorted(draw(st.sets(st.integers(0, 1 << 30), min_size=1, max_size=30)))
    steps = draw(st.lists(st.floats(0, 1e-3, allow_nan=False), min_size=len(sizes),
                          max_size=len(sizes)))
    t, points = draw(st.floats(0, 1e-4, allow_nan=False)), []
    for nbytes, step in zip(sizes, steps, strict=True):
        t += step
        points.append((nbytes, t))
    return points


@given(_monotone_points(), st.integers(0, 1 << 32), st.integers(0, 1 << 32))
def test_lookup_is_monotone_when_the_points_are(points, a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    t_lo, t_hi = interpolate(points, lo), interpolate(points, hi)
    assert t_lo >= 0
    assert t_lo <= t_hi * (1 + 1e-12) + 1e-300, (lo, hi, t_lo, t_hi)
    for nbytes, t in points:  # and it passes through every point
        assert interpolate(points, nbytes) == t


# ----- refusals ---------------------------------------------------------------------------

def _one_line(err: UserError) -> str:
    text = str(err)
    assert "\n" not in text
    return text


def test_unknown_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.table"
    path.write_text(format_table(_result(), "mpich").replace("xfer-table 4", "xfer-table 5", 1))
    with pytest.raises(UserError) as err:
        read_table(path)
    msg = _one_line(err.value)
    assert "version 5" in msg and "versions 1 to 4" in msg and str(path) in msg
    assert "mpi-overlap calibrate" in msg


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda t: "hello\n", "is not a transfer-time table"),
        (lambda t: "", "is not a transfer-time table"),
        (lambda t: t.replace("intra 1 2.9e-07", "intra 0 2.9e-07"),
         "line 10: intra sizes must increase"),
        (lambda t: t.replace("intra 1 2.9e-07", "intra x 2.9e-07"), "line 10: expected 'intra"),
        (lambda t: t.replace("intra 1 2.9e-07", "intra 1 -2"), "line 10: bytes and seconds"),
        (lambda t: t.replace("intra 1 2.9e-07", "extra 1 2"), "line 10: unknown line 'extra'"),
        (lambda t: t.replace("ok 2.9e-07 0 16 20", "ok 2.9e-07 0 16"), "line 10: expected"),
        (lambda t: t.replace("ok 2.9e-07 0 16 20", "ok 2.9e-07 0 21 20"),
         "line 10: bad point quality"),
        (lambda t: t.replace("ok 2.9e-07 0 16 20", "fine 2.9e-07 0 16 20"),
         "line 10: bad point quality"),
        (lambda t: t.replace(f"machine {MACHINE_FP}", "machine xyz"), "fingerprint"),
        (lambda t: t.replace("toolchain_name mpich\n", ""), "missing toolchain_name"),
        (lambda t: t.replace("ranks 2 nodes 1", "ranks 2"), "ranks <n> nodes <m>"),
        (lambda t: t.replace("verdict ok", "verdict great"), "unknown verdict 'great'"),
        (lambda t: "".join(x for x in t.splitlines(True) if not x.startswith("verdict")),
         "missing verdict"),
        (lambda t: "".join(x for x in t.splitlines(True) if not x.startswith("intra")),
         "no points"),
        (lambda t: t.replace("end\n", ""), "cut short (no 'end' line)"),
        (lambda t: t[:-12], "cut short: its last line has no end of line"),
        (lambda t: t + "intra 9999999 1\n", "text after 'end'"),
        (lambda t: t.replace("end\n", "unmeasured intra 5\nend\n"), "expected 'unmeasured"),
    ],
)
def test_malformed_tables_are_refused(tmp_path: Path, change, fragment: str) -> None:
    path = tmp_path / "t.table"
    path.write_text(change(format_table(_result(), "mpich")))
    with pytest.raises(UserError) as err:
        read_table(path)
    assert fragment in _one_line(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        read_table(tmp_path / "nope.table")


def test_fitting_table_passes() -> None:
    check_fits(_table({"intra": [(0, 1e-6)]}), MACHINE_FP, TOOLCHAIN_FP)


def test_other_machine_is_refused_naming_both_sides_and_the_override() -> None:
    table = _table({"intra": [(0, 1e-6)]})
    table.path = Path("/x/mpich.table")
    with pytest.raises(UserError) as err:
        check_fits(table, "0123456789abcdef", TOOLCHAIN_FP, machine_key="cpu=Other;ncpu=8")
    msg = _one_line(err.value)
    assert "/x/mpich.table" in msg and "another machine:" in msg
    assert MACHINE_FP in msg and MACHINE_KEY in msg
    assert "0123456789abcdef" in msg and "cpu=Other;ncpu=8" in msg
    assert OVERRIDE_HINT in msg and "--table PATH --force-table" in msg
    assert "toolchain " + TOOLCHAIN_FP not in msg  # only what differs


def test_other_toolchain_and_machine_are_both_named() -> None:
    table = _table({"intra": [(0, 1e-6)]})
    with pytest.raises(UserError) as err:
        check_fits(table, "0123456789abcdef", "fedcba9876543210",
                   toolchain_key="Open MPI v5.0.11")
    msg = _one_line(err.value)
    assert "another machine and toolchain" in msg
    assert TOOLCHAIN_FP in msg and TOOLCHAIN_KEY in msg
    assert "fedcba9876543210 (Open MPI v5.0.11)" in msg
    assert "0123456789abcdef" in msg and OVERRIDE_HINT in msg


# ----- CLI input errors (before anything is built) ----------------------------------------

@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--mpi", "nosuch"], "unknown toolchain 'nosuch'"),
        (["--sizes", "1kb"], "invalid message size"),
        (["--sizes", "4g"], "exceeds the largest MPI count"),
        (["-n", "1"], "at least 2 ranks"),
        (["--timeout", "0"], "--timeout must be positive"),
        (["--launcher", "no-such-launcher"], "not found"),
    ],
)
def test_calibrate_bad_input_one_line(args: list[str], fragment: str, tmp_path: Path) -> None:
    proc = run_cli("calibrate", *args, env={"MPI_OVERLAP_HOME": str(tmp_path / "state")},
                   timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mpi-overlap: error: "), proc.stderr
    assert fragment in lines[0]
    assert not (tmp_path / "state" / "build").exists(), "nothing was built"


# ----- classes from two calibrations -------------------------------------------------------

def test_a_calibration_keeps_the_classes_it_did_not_measure() -> None:
    intra = replace(_table({"intra": [(0, 1e-6), (1 << 20, 1e-4)]}), verdict="ok",
                    verdict_reason="all sizes agree", sources=["/r/one-node"])
    inter = replace(_table({"inter": [(0, 1e-5), (1 << 20, 8e-3)]}), nodes=2, verdict="noisy",
                    verdict_reason="spread", sources=["/r/two-nodes"],
                    created="2026-02-01T00:00:00Z")
    both = inter.with_classes_of(intra)
    assert both.points == {"intra": intra.points["intra"], "inter": inter.points["inter"]}
    assert both.verdict == "noisy" and both.nodes == 2
    assert both.verdict_reason == ("inter: spread; intra kept from the table of "
                                   "2026-01-01T00:00:00Z (verdict ok)")
    assert both.sources == ["/r/two-nodes", "/r/one-node"]
    # measured again on one node: inter stays, intra is the new one; the reasons do not nest
    again = replace(_table({"intra": [(0, 2e-6)]}), verdict="ok", verdict_reason="fine")
    merged = again.with_classes_of(both)
    assert merged.points["intra"] == [(0, 2e-6)] and merged.points["inter"] == both.points["inter"]
    assert merged.verdict_reason.count("kept from") == 1 and merged.verdict == "noisy"
    # a class measured in both: the new one only, nothing kept
    assert intra.with_classes_of(again) is intra


# ----- the transfer model's parts (version 4) ------------------------------------------------

def _with_parts(res: dict, parts: dict[int, tuple[float, float, float]]) -> dict:
    """`res` with parts samples (o_s, o_r, g) at the given sizes of its intra pair: 12
    undisturbed samples around each value (±5 %) and 4 disturbed ones 20 times slower."""
    for size in res["results"]["pairs"][0]["sizes"]:
        if size["bytes"] in parts:
            size["parts"] = {
                name: {"samples_s": [v * (0.95 + 0.01 * i) for i in range(11)] + [20 * v] * 4,
                       "cpu_share": [1.0] * 11 + [0.3] * 4}
                for name, v in zip(("o_s", "o_r", "g"), parts[size["bytes"]], strict=True)}
    return res


def test_parts_decide_eager_and_round_trip() -> None:
    """o_s well below the one-way time: eager; o_s about the one-way time: rendezvous. The
    eager limit is the largest size up to which all are eager; each part's estimate is the
    lower quartile of its undisturbed samples, inside its interval; the file keeps them."""
    res = _with_parts(_result(), {0: (5e-8, 3e-8, 1e-7), 1024: (3e-7, 1e-7, 4e-7),
                                  1 << 20: (1.25e-4, 1.1e-4, 1.3e-4)})
    text = format_table(res, "mpich", created="2026-01-01T00:00:00Z")
    table = parse_table(text)
    assert table.eager_limits == {"intra": 1024}
    protocols = {b: p.protocol for (_, b), p in table.parts.items()}
    assert protocols == {0: "eager", 1024: "eager", 1 << 20: "rendezvous"}
    p = table.parts[("intra", 1024)]
    assert p.o_s.lo_s <= p.o_s.value_s <= p.o_s.hi_s
    assert p.o_s.value_s == pytest.approx(3e-7 * 0.975, rel=1e-3)  # the lower quartile
    assert p.latency(1e-6).value_s == pytest.approx(1e-6 - p.o_s.value_s - p.o_r.value_s)
    assert "eager_limit intra 1024" in text.splitlines()
    assert render_table(table) == text


def test_a_calibration_keeps_the_parts_of_the_class_it_did_not_measure() -> None:
    """A two-node calibration (inter only) beside a one-node table: the intra class keeps
    its parts and eager limit with its points, so the kept class is still priced eager or
    rendezvous by size (predict --placement, a later profile on one node)."""
    one_node = parse_table(format_table(
        _with_parts(_result(), {0: (5e-8, 3e-8, 1e-7), 1024: (3e-7, 1e-7, 4e-7),
                                1 << 20: (1.25e-4, 1.1e-4, 1.3e-4)}), "mpich"))
    two_nodes = replace(_table({"inter": [(0, 1e-5), (1 << 20, 8e-3)]}), nodes=2)
    both = two_nodes.with_classes_of(one_node)
    assert both.parts == one_node.parts and both.eager_limits == {"intra": 1024}
    assert both.eager_parts("intra", 1024, 1e-6) == one_node.eager_parts("intra", 1024, 1e-6)
    assert both.eager_parts("intra", 1024, 1e-6) is not None
    assert parse_table(render_table(both)).parts == one_node.parts  # and it is written


def test_a_size_whose_parts_were_all_disturbed_has_none() -> None:
    res = _with_parts(_result(), {0: (5e-8, 3e-8, 1e-7)})
    for part in res["results"]["pairs"][0]["sizes"][0]["parts"].values():
        part["cpu_share"] = [0.3] * len(part["cpu_share"])
    table = parse_table(format_table(res, "mpich"))
    assert table.parts == {} and table.eager_limits == {}


@pytest.mark.parametrize(("line", "fragment"), [
    ("parts intra 0 eager 1 1 1", "expected 'parts"),
    ("parts intra 0 lazy 1 1 1 1 1 1 1 1 1", "expected 'parts"),
    ("parts intra 0 eager 2 1 3 1 1 1 1 1 -1", "not negative"),
    ("parts intra 0 eager 5 1 3 1 1 1 1 1 1", "within its interval"),
    ("eager_limit intra x", "expected 'eager_limit"),
    ("eager_limit elsewhere 4", "expected 'eager_limit"),
])
def test_bad_parts_lines_are_refused_in_one_line(line: str, fragment: str) -> None:
    _refused_in_one_line(line, fragment)


def _refused_in_one_line(line: str, fragment: str) -> None:
    """A table with `line` added before its end is refused, in one line that says
    `fragment`."""
    text = format_table(_result(), "mpich").replace("\nend\n", f"\n{line}\nend\n")
    with pytest.raises(UserError) as err:
        parse_table(text)
    assert fragment in _one_line(err.value)


def test_a_version_3_table_is_read_without_parts() -> None:
    text = format_table(_result(), "mpich")
    old = "\n".join(" ".join(line.split()[:-2]) if line.startswith("intra ") else line
                    for line in text.splitlines()).replace("xfer-table 4", "xfer-table 3", 1)
    table = parse_table(old + "\n")
    assert table.version == 3 and table.parts == {}
    assert table.quality[("intra", 0)].lo_s is None


# ----- the stream (version 4) ----------------------------------------------------------------

def _with_stream(res: dict, cls: str, per_message: float, shares: list[float]) -> dict:
    """`res` with a stream of 64 KiB in windows of 32 on its `cls` pair: one sample per
    share, the undisturbed ones (share 1) 1, 2, 3 ... percent above `per_message`, the
    disturbed ones 10 times slower."""
    pair = next(p for p in res["results"]["pairs"] if p["class"] == cls)
    pair["stream"] = {"bytes": 65536, "window": 32, "cpu_share": shares,
                      "samples_s": [per_message * (1.0 + 0.01 * (i + 1)) if s >= 0.9
                                    else 10 * per_message for i, s in enumerate(shares)]}
    return res


def test_the_stream_is_written_read_and_kept_per_class() -> None:
    """5 windows at 1.31 ms per message, 1 disturbed: the lower quartile of the 4
    undisturbed samples (1.01, 1.02, 1.03, 1.04 x 1.31 ms: numpy's 1.0175 x), inside its
    interval; the line round-trips, and a class a calibration did not measure keeps its
    stream beside the new class's."""
    res = _with_stream(_result(inter=True), "inter", 1.31e-3, [1.0, 1.0, 0.3, 1.0, 1.0])
    text = format_table(res, "mpich", created="2026-01-01T00:00:00Z")
    table = parse_table(text)
    st = table.streams["inter"]
    assert (st.nbytes, st.window, st.undisturbed, st.samples) == (65536, 32, 4, 5)
    assert st.per_message.value_s == pytest.approx(1.31e-3 * 1.0175, rel=1e-5)  # 6 digits
    assert st.per_message.lo_s <= st.per_message.value_s <= st.per_message.hi_s
    assert st.per_byte_s == pytest.approx(st.per_message.value_s / 65536)
    assert "intra" not in table.streams
    line = next(x for x in text.splitlines() if x.startswith("stream "))
    assert line.split()[:4] == ["stream", "inter", "65536", "32"] and line.endswith(" 4 5")
    assert render_table(table) == text
    one_node = replace(_table({"intra": [(0, 1e-6)]}), streams={})
    assert one_node.with_classes_of(table).streams == {"inter": st}


def test_a_stream_with_too_few_undisturbed_windows_takes_all() -> None:
    """2 of 5 windows undisturbed (1.01 and 1.02 x 10 µs; 3 at 100 µs): the lower
    quartile of all 5 (a window's pace can only be slowed), 1.02 x 10 µs, the line
    saying 2 of 5; 2 windows in all: no stream."""
    res = _with_stream(_result(), "intra", 1e-5, [1.0, 1.0, 0.3, 0.3, 0.3])
    st = parse_table(format_table(res, "mpich")).streams["intra"]
    assert st.per_message.value_s == pytest.approx(1.02e-5, rel=1e-5)
    assert (st.undisturbed, st.samples) == (2, 5)
    res = _with_stream(_result(), "intra", 1e-5, [1.0, 1.0])
    text = format_table(res, "mpich")
    assert parse_table(text).streams == {} and "\nstream " not in text


@pytest.mark.parametrize(("line", "fragment"), [
    ("stream intra 65536 32 1e-5 1e-5 1e-5 5", "expected 'stream"),
    ("stream elsewhere 65536 32 1e-5 1e-5 1e-5 5 5", "expected 'stream"),
    ("stream intra 65536 32 1e-5 1e-5 1e-5 6 5", "expected 'stream"),
    ("stream intra 65536 32 2e-5 1e-5 1.5e-5 5 5", "lo <= seconds <= hi"),
    ("stream intra 65536 32 nan 1e-5 1.5e-5 5 5", "finite"),
])
def test_bad_stream_lines_are_refused_in_one_line(line: str, fragment: str) -> None:
    _refused_in_one_line(line, fragment)


def test_a_stream_given_twice_is_refused() -> None:
    line = "stream intra 65536 32 1e-5 1e-5 1e-5 5 5"
    text = format_table(_result(), "mpich").replace("\nend\n", f"\n{line}\n{line}\nend\n")
    with pytest.raises(UserError, match="stream of intra given twice"):
        parse_table(text)

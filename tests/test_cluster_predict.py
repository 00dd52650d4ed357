"""`mpi-overlap cluster predict-check` (issue 36 item 4): a mini-app traced on two nodes is
predicted at another link rate and on one node, and measured at each on the emulated
cluster. The check brings its own cluster up at each rate, so it has a module (and the
module's cluster) of its own.

The structure and the physics are checked on any machine: every target has a prediction
and a measurement, and an error only from runs that were not disturbed; where none was,
a slower link is predicted and measured slower (docs/method.md, "Predicting by replay",
has the measured errors).

Needs what tests/test_cluster.py needs, and skips with the same reason without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import one_line_error, run_cli

RATES = ("400mbit", "100mbit")


def _row(doc: dict, target: str) -> dict:
    (row,) = [r for r in doc["rows"] if r["target"] == target]
    return row


def test_predicts_and_measures_another_rate_and_one_node(cluster: None, tmp_path: Path) -> None:
    out = tmp_path / "check"
    # no run waits for the machine at the trace's speed: the test checks the structure
    # (runs off that speed are left out of the errors, as disturbed ones are), and the
    # waits made it 62 s where it took 45 (a fresh clone, 2026-12-02)
    proc = run_cli("cluster", "predict-check", "--rates", ",".join(RATES), "--reps", "1",
                   "--cases", "halo-blocking", "--speed-wait", "0", "--out", str(out),
                   timeout=1800)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads((out / "predict-check.json").read_text())
    targets = [f"2 nodes at {r}" for r in RATES] + ["1 node"]
    assert [r["target"] for r in doc["rows"]] == targets
    assert doc["base"] == targets[0]
    for name in targets:  # each target priced with a table of its own, made there
        assert Path(doc["tables"][name]["path"]).is_file()
    assert len({t["path"] for t in doc["tables"].values()}) == len(targets)
    for line in (f"halo-blocking     {t}" for t in targets):
        assert line in proc.stdout, proc.stdout

    # every run between two references of the machine's speed; a base run judged by its
    # computation against the case's least, any other against the trace's speed (per CPU
    # the faster of its two references)
    speed = doc["machine_speed"]
    traced = speed["traces_s"]["halo-blocking"]
    assert len(speed["references_s"]) >= 2 * len(targets) and all(s > 0 for s in traced)
    for by_case in doc["runs"].values():
        for entry in by_case["halo-blocking"]:
            assert len(entry["speed_s"]["before"]) == len(traced)
            assert entry["speed_change_pct"] is not None
            assert entry["speed_changed"] == (entry["speed_change_pct"] > speed["change_pct"])
    # one node computes no more than its two-node trace: a run there is also judged by
    # its computation against the trace's; at a rate the computation moves with the link
    trace_comp = None
    for entry in doc["runs"][targets[0]]["halo-blocking"]:
        if entry["computation_over_least_pct"] == 0.0:
            trace_comp = entry["measured"]["run_s"] - entry["measured"]["mpi_s"]
    for entry in doc["runs"]["1 node"]["halo-blocking"]:
        over = entry["computation_over_trace_pct"]
        comp = entry["measured"]["run_s"] - entry["measured"]["mpi_s"]
        assert over == pytest.approx(100 * (comp / trace_comp - 1))
        assert entry["slow"] == (over > speed["change_pct"])
    assert all("computation_over_trace_pct" not in e
               for e in doc["runs"][targets[1]]["halo-blocking"])
    rows = [_row(doc, t) for t in targets]
    for r in rows:
        for part in ("predicted", "measured"):
            assert r[part]["run_s"] > 0 and 0 <= r[part]["mpi_s"] <= r[part]["run_s"]
        # an error only from runs not left out (disturbed, off the trace's speed), and then
        # for each figure
        assert ("left_out" in r) == (r["error_pct"] is None)
        assert isinstance(r["computation_change_pct"], float)
    # at the base, the trace against its own run, and every base run not left out
    # replayed on its own table
    base = rows[0]
    base_runs = doc["runs"][targets[0]]["halo-blocking"]
    (trace_entry,) = [e for e in base_runs if e["run_dir"] == base["trace"]]
    assert base["measured"] == trace_entry["measured"]
    kept = [e for e in base_runs if not e["disturbed"] and not e["slow"]]
    assert len(base["runs_replayed_error_pct"]) == len(kept)
    # the trace is the undisturbed base run that computed least
    quiet = [e for e in base_runs if not e["disturbed"]] or base_runs
    assert trace_entry["computation_over_least_pct"] == 0.0
    assert all(e["computation_over_least_pct"] >= 0.0 for e in quiet)
    assert "replayed on its own table" in proc.stdout or not kept
    # one node packs the two-node trace's messages into a node: the prediction is a range
    # whose other end leaves the recorded payload work out (predict's payload_work), no
    # longer in run time; the rates keep their transport and have none
    one = _row(doc, "1 node")
    said = one["payload_work"]
    assert said["without"]["run_s"] <= one["kept"]["run_s"] * (1 + 1e-9)
    assert set(one["inside_range"]) == {"run_s", "mpi_s", "waiting_s"}
    assert "the recorded payload work kept whole" in proc.stdout
    # halo's faces are subarrays of doubles: the trace names their layout, and the
    # prediction the messages it packs that have it
    assert said["layouts"] and said["layouts"][0]["layout"].startswith("subarray of MPI_DOUBLE")
    assert said["layouts"][0]["messages"] <= said["messages"]
    # and the check times those layouts here (predict --probe): the target is this
    # machine, so the row's prediction is the probe's
    assert said["probe"]["cases"] and all("layout_s" in c for c in said["probe"]["cases"])
    assert one["predicted"]["run_s"] > 0 and "with the layouts timed here" in proc.stdout
    assert all("payload_work" not in r for r in rows[:2])
    quiet = not any("left_out" in r or r["disturbed_runs"] or r["speed_changed_runs"]
                    or doc["tables"][r["target"]]["suspect"] for r in rows)
    if quiet:
        slow, fast = _row(doc, targets[1]), _row(doc, targets[0])
        # 32 KiB faces take 2.6 ms at 100 Mbit/s and 0.66 ms at 400: the slower link must show
        # in the prediction made from the faster one's trace, and in the measurement
        assert slow["predicted"]["run_s"] > 1.5 * fast["predicted"]["run_s"], slow
        assert slow["measured"]["run_s"] > 1.5 * fast["measured"]["run_s"], slow
    # each row judged against issue 36's bounds where the machine held its speed (the
    # base's row in any state), and the check says which it was
    steady = doc["steadiness"]["steady"]
    for r in rows:
        v = r["verdict"]
        assert v["verdict"] in ("holds", "misses", "not judged"), v
        assert (v["verdict"] == "not judged") == (
            r["error_pct"] is None or (r["target"] != doc["base"] and not steady)), v
    assert sum(doc["verdicts"].values()) == len(rows)
    assert "the check's bounds" in proc.stdout and "the machine's speed:" in proc.stdout
    # How close the predictions come, and whether the measured runs fall inside the one
    # node's range, is measured, not asserted: docs/method.md has the tables.


def test_bad_input_is_one_line() -> None:
    for args in (("--cases", "nope"), ("--rates", "fast")):
        proc = run_cli("cluster", "predict-check", *args, timeout=60)
        assert proc.returncode != 0
        one_line_error(proc)

"""Advice gains from replay on a real traced run (issue 36, item 2, acceptance): the
program native/tests/critical_path_app.c on 2 ranks of the MPICH wheel, where rank 0's
MPI_Isend waits at once in MPI_Wait for rank 1, whose computation is the critical path.
The profile advises moving computation between rank 0's post and wait (a positive
per-call sum); replayed, hiding that transfer gains about nothing, while hiding rank 1's
end of the same messages (its MPI_Recv, advised to be made non-blocking) shortens the
run. The replay is deterministic on the trace, so no timing is asserted beyond it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli
from mpi_overlap.platform.build import build_dir_for, ensure_built
from mpi_overlap.platform.toolchains import get_toolchain

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def predicted_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("gains")
    tc = get_toolchain("mpich")
    ensure_built(tc)
    app = build_dir_for(tc) / "tests" / "critical_path_app"
    proc = run_cli("profile", "--mpi", "mpich", "-n", "2", "--trace", "--no-report",
                   "--out", str(base), "--", str(app), "5", "10", timeout=600, cwd=base)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = next(p for p in base.iterdir() if (p / "run.json").is_file())
    proc = run_cli("predict", str(run), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Advice replayed with its change" in proc.stdout
    return run


@pytest.fixture(scope="module")
def predicted(predicted_run: Path) -> dict:
    return json.loads((predicted_run / "predict.json").read_text())


def _row(doc: dict, rule: str, post_fn: str) -> dict:
    rows = [r for r in doc["advice_gains"]["items"] if r["rule"] == rule]
    found = [r for r in rows if r.get("named") and (
        r["named"]["sends"] if post_fn == "MPI_Isend" else r["named"]["receives"])]
    assert found, doc["advice_gains"]
    return found[0]


def test_hiding_rank_0s_transfer_gains_about_nothing(predicted) -> None:
    row = _row(predicted, "move-computation", "MPI_Isend")
    assert row["named"] == {"sends": 5, "receives": 0, "collectives": 0}
    assert row["bound_s"] > 0
    # Both ranks leave the closing MPI_Barrier together: either may be the one that ends
    # last (it was rank 0 in some runs), which does not change the gain.
    assert row["critical_rank"] in (0, 1)
    assert abs(row["replayed_gain_s"]) < 1e-6


def test_hiding_rank_1s_end_shortens_the_run(predicted) -> None:
    row = _row(predicted, "nonblocking", "MPI_Recv")
    assert row["named"]["receives"] == 5
    assert row["replayed_gain_s"] > 0
    assert row["replayed_gain_s"] <= row["model_local_s"] + row["waiting_removed_s"] + 1e-9


def test_the_report_shows_the_prediction(predicted_run: Path, predicted: dict) -> None:
    """report.html has the prediction's section, report.json its block: the job's figures,
    the call sites and the advice items' replayed gains, as predict.json has them."""
    proc = run_cli("report", str(predicted_run), timeout=300)
    assert proc.returncode == 0, proc.stderr
    page = (predicted_run / "report.html").read_text()
    assert "Prediction by replay" in page and "Advice replayed with its change" in page
    assert "MPI time by call site" in page and predicted["sites"][0]["site"] in page
    (block,) = [r for r in json.loads((predicted_run / "report.json").read_text())["runs"]]
    got = block["results"]["prediction"]
    assert got["predicted"] == predicted["predicted"]
    assert got["advice_gains"] == predicted["advice_gains"]
    assert got["sites"] == predicted["sites"] and got["sites"]

"""A traced profile's prediction by replay in its report: what `mpi-overlap predict` last
wrote into the run directory (predict.json) as a section of report.html (the job's
figures recorded and predicted, the call sites with the most MPI time, the advice
items' replayed gains beside their per-call sums) and a `prediction` block in
report.json. A run without predict.json shows and writes nothing here; the terminal has
`predict`'s own output.

Here, not in profile/report/: it shows predict's results and so imports predict/, which
reads the profile's traces (one way: predict above the profile)."""

from __future__ import annotations

from typing import Any

from ..core.errors import UserError
from ..core.formatting import DASH, fmt_time
from ..core.json_input import read_json
from ..profile.report.profile_checks import to_json as checks_json
from ..report.html import HtmlTable, Section
from ..run.rundir import Run
from .words import (
    JOB_FIGURES,
    LINK_HEADERS,
    OUT_FILE,
    SCHEMA,
    SITE_HEADERS,
    SITES_SHOWN,
    change_text,
    gain_text,
    link_rows,
    overlap_rows,
    payload_work_text,
    per_call_text,
    site_cells,
    sites_left_text,
    target_words,
)


def prediction(run: Run) -> dict[str, Any] | None:
    """The run's predict.json, or None (none there, another schema, unreadable)."""
    path = run.path / OUT_FILE
    if not path.is_file():
        return None
    try:
        doc = read_json(path)
    except UserError:
        return None
    return doc if doc.get("schema") == SCHEMA else None


def _job_table(doc: dict[str, Any]) -> HtmlTable:
    rec, pred = doc["recorded"], doc["predicted"]
    rows = [(name, fmt_time(rec[key]), fmt_time(pred[key]), change_text(doc, key) or DASH)
            for key, name in JOB_FIGURES]
    over = overlap_rows(doc)
    rows += [(f"{name} (transfers, all ranks)", r, p, ch or DASH) for name, r, p, ch in over]
    notes = ["Overlap bounds: the profiler's (docs/method.md, \"Overlap bounds\") on the "
             "recorded timeline and on the replayed one with the target's transfer times; "
             "per call site in predict.json."] if over else []
    payload = payload_work_text(doc)
    return HtmlTable(caption="Recorded and predicted (job)",
                     headers=("", "recorded", "predicted", "change"), rows=rows,
                     css=[("left", "num", "num", "num")] * len(rows),
                     footnotes=notes + ([payload] if payload else []))


def _sites_table(doc: dict[str, Any]) -> HtmlTable | None:
    rows = doc.get("sites") or []  # none in a predict.json written before it had them
    if not rows:
        return None
    cells = [site_cells(r) for r in rows[:SITES_SHOWN]]
    left = sites_left_text(rows, SITES_SHOWN)
    return HtmlTable(caption="MPI time by call site, all ranks (recorded and predicted)",
                     headers=SITE_HEADERS, rows=cells,
                     css=[("left", "left") + ("num",) * 6] * len(cells),
                     footnotes=[f"And {left} (every site is in predict.json)."] if left
                     else [])


def _links_table(doc: dict[str, Any]) -> HtmlTable | None:
    rows = link_rows(doc)
    if not rows:
        return None
    return HtmlTable(
        caption="Link directions (recorded and predicted)", headers=LINK_HEADERS, rows=rows,
        css=[("left", "left") + ("num",) * 7] * len(rows),
        footnotes=["Busy: the time the replay holds a direction for its messages, one "
                   "message's G s at a time (LogGP's G, from the table's stream); waited: "
                   "the messages that found it busy and started later. The recorded side "
                   "applies the same rule at the recorded times: the model's reading of "
                   "the traced run, not a measurement of its wire (docs/method.md, \"A busy "
                   "link\")."])


def _gains_table(doc: dict[str, Any]) -> HtmlTable | None:
    items = (doc.get("advice_gains") or {}).get("items") or []
    if not items:
        return None
    rows = []
    for row in items:
        gain = gain_text(row)
        rows.append((f"{row['item']}. {row['rule']}", per_call_text(row) or DASH,
                     gain if gain is not None else f"not replayed: {row.get('note')}",
                     fmt_time(row["waiting_removed_s"]) if gain is not None else DASH))
    return HtmlTable(
        caption="Advice replayed with its change",
        headers=("advice item", "per-call sum", "replayed gain", "waiting removed"),
        rows=rows, css=[("left", "num", "num", "num")] * len(rows),
        footnotes=["Replayed gain: the predicted run time minus that of the replay with "
                   "the item's change, on the same model; it counts what moves along the "
                   "critical path, where the per-call sum counts each named call alone. "
                   "Waiting removed: on the rank that ends last (docs/method.md, \"Advice "
                   "gains from replay\")."])


def html_sections(runs: list[Run]) -> list[Section]:
    out = []
    for run in runs:
        doc = prediction(run)
        if doc is None:
            continue
        tables = [_job_table(doc)]
        tables += [t for t in (_links_table(doc), _sites_table(doc), _gains_table(doc))
                   if t is not None]
        out.append(Section(
            title=f"Prediction by replay — {run.label}",
            intro=(f"`mpi-overlap predict` replayed this run's trace on "
                   f"{target_words(doc['target'])}: computation as recorded, the MPI calls "
                   "on the transfer model (docs/method.md, \"Predicting by replay\")."),
            tables=tables))
    return out


def to_json(run: Run) -> dict[str, Any]:
    """The profile's report.json block, with the prediction where the run has one (no
    key otherwise, so runs never predicted read as before)."""
    doc = prediction(run)
    block = checks_json(run)
    if doc is not None:
        block["prediction"] = {k: doc.get(k) for k in
                               ("target", "recorded", "predicted", "error_pct",
                                "payload_work", "links", "sites", "advice_gains")}
    return block

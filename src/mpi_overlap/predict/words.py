"""What a prediction says in words and where it lies (predict.json), shared by `predict`'s
terminal output and the profile report's section (report_section.py), which must
not pay for importing the replay engine."""

from __future__ import annotations

import math
from typing import Any

from ..core.formatting import DASH, fmt_pct, fmt_time

SCHEMA = "predict-v1"
OUT_FILE = "predict.json"

JOB_FIGURES = (("run_s", "run time"), ("mpi_s", "MPI time (mean)"),
               ("waiting_s", "waiting (mean)"))
# The transfers' overlap bounds (predict/bounds.py), summed over the ranks as the
# profile's job figures are: the transfer time and how much of it computation hid at
# most and at least, on the recorded and on the replayed timeline.
OVERLAP_FIGURES = (("xfer_s", "transfer time"), ("max_s", "overlapped, at most"),
                   ("min_s", "overlapped, at least"), ("nonoverlap_s", "not hidden, at least"))


def overlap_rows(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The job's overlap bounds as (figure, recorded, predicted, change) text; none for a
    predict.json written before it had them."""
    rec, pred = doc["recorded"].get("overlap"), doc["predicted"].get("overlap")
    if not rec or not pred:
        return []
    rows = []
    for key, name in OVERLAP_FIGURES:
        r, p = rec[key], pred[key]
        change = fmt_pct(100.0 * (p - r) / r, 1, sign=True, missing="") if r > 0 else ""
        rows.append((name, fmt_time(r), fmt_time(p), change))
    return rows


def target_words(t: dict[str, Any]) -> str:
    """What a prediction replayed on, in words (predict.json's `target`)."""
    what = ["the run's own table" if t["table_is_the_runs"] else f"table {t['table']}"]
    if t["link"]:
        ln = t["link"]
        what.append(f"a link of {ln['rate']} and {fmt_time(ln['latency_s'])} on top for "
                    "messages between nodes"
                    + (" (one rank per node)" if ln["one_rank_per_node"] else ""))
    if t.get("placement"):
        what.append(f"{t['placement']} rank(s) per node")
    if t["overlap"] != "model":
        what.append(f"overlap {t['overlap']}")
    if t["progress"] != "calls":
        what.append(f"progress {t['progress']}")
    return ", ".join(what)


def change_text(doc: dict[str, Any], key: str) -> str:
    """A job figure's change, predicted against recorded ("" where there is none)."""
    p = doc["error_pct"][key]
    return fmt_pct(p if p is not None and math.isfinite(p) else None, 1, sign=True, missing="")


def gain_text(row: dict[str, Any]) -> str | None:
    """An advice item's replayed gain, with the both-ends figure where there is one;
    None where the item was not replayed."""
    gain = row.get("replayed_gain_s")
    if gain is None:
        return None
    both = row.get("both_ends_gain_s")
    return fmt_time(gain) + (f" ({fmt_time(both)} with both ends polled)" if both is not None
                             else "")


def per_call_text(row: dict[str, Any]) -> str | None:
    """The advice item's own per-call sum (its local bound), None where it has none."""
    bound = row.get("bound_s")
    return fmt_time(bound) if isinstance(bound, float | int) else None


# Call sites shown in the terminal and on the page (all of them are in predict.json).
SITES_SHOWN = 10
SITE_HEADERS = ("call site", "function", "calls", "recorded", "predicted",
                "waiting recorded", "waiting predicted", "overlapped ≤ (rec → pred)")


def site_cells(row: dict[str, Any]) -> tuple[str, ...]:
    """A call site's row of predict.json's `sites` as text, in SITE_HEADERS' order: the
    last, the most overlapped time of the transfers its calls posted, recorded → predicted
    (a dash for a site that posted none, or a predict.json written before it had them)."""
    hidden = (f"{fmt_time(row['recorded_max_s'])} → {fmt_time(row['predicted_max_s'])}"
              if row.get("transfers") else DASH)
    return (row["site"], row["fn"], str(row["calls"]), fmt_time(row["recorded_s"]),
            fmt_time(row["predicted_s"]), fmt_time(row["recorded_waiting_s"]),
            fmt_time(row["predicted_waiting_s"]), hidden)


def sites_left_text(rows: list[dict[str, Any]], shown: int) -> str | None:
    """What the rows beyond the first `shown` add up to, None where there are none."""
    rest = rows[shown:]
    if not rest:
        return None
    return (f"{len(rest)} more call site(s): "
            f"{fmt_time(sum(r['recorded_s'] for r in rest))} recorded, "
            f"{fmt_time(sum(r['predicted_s'] for r in rest))} predicted")

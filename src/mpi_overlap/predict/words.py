"""What a prediction says in words and where it lies (predict.json), shared by `predict`'s
terminal output and the profile report's section (report_section.py), which must
not pay for importing the replay engine."""

from __future__ import annotations

import math
from typing import Any

from ..core.formatting import DASH, fmt_mib, fmt_pct, fmt_time

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
        change = change_words(100.0 * (p - r) / r) if r > 0 else ""
        rows.append((name, fmt_time(r), fmt_time(p), change))
    return rows


# Datatype layouts named in payload_work_text's note (all of them are in predict.json).
LAYOUTS_SHOWN = 3


def payload_work_text(doc: dict[str, Any]) -> str | None:
    """What a placement that packs ranks into a node does to the prediction
    (predict.json's `payload_work`), in words; None where no message moved into a node."""
    pw = doc.get("payload_work")
    if not pw:
        return None

    def figs(f: dict[str, float]) -> str:
        return (f"run time {fmt_time(f['run_s'])}, MPI time {fmt_time(f['mpi_s'])}, "
                f"waiting {fmt_time(f['waiting_s'])}")

    head = (f"{pw['messages']:,} messages crossed nodes as recorded and stay within a node "
            "here. The time the recorded calls spent on their payload beyond the table was "
            "the network transport's")
    probe = pw.get("probe")
    if probe and not probe["cases"]:
        body = ("; they are contiguous at both ends, which the table prices, so the "
                "prediction above leaves that work out (--probe had nothing to time). Kept "
                f"whole instead: {figs(pw['kept'])}")
    elif probe:
        timed = "; ".join(
            f"{c['messages']:,} × {c['bytes']:,} B "
            + (f"{fmt_time(c['layout_s'])} an exchange against {fmt_time(c['contiguous_s'])} "
               "contiguous" if "layout_s" in c else f"not timed ({c.get('error')})")
            for c in probe["cases"][:LAYOUTS_SHOWN])
        queued = probe.get("deferred") or 0
        body = (f"; the prediction above gives their datatypes' own work what {len(probe['cases'])}"
                f" layout(s) took here, on 2 ranks of {probe['toolchain']} ({timed}; "
                f"{probe['dir']})"
                + (f", and moves {queued:,} of them only once both ends' calls complete them "
                   "(MPI_Isend queued them here)" if queued else "")
                + f". Kept whole instead: {figs(pw['kept'])}; left out: {figs(pw['without'])}")
    else:
        body = (f", and is kept whole above; left out, the replay gives {figs(pw['without'])}. "
                "The prediction is a range between the two (`--probe` times the layouts "
                "here instead)")
    layouts = pw.get("layouts") or []
    shown = "; ".join(f"{x['messages']:,} {x['layout']}" for x in layouts[:LAYOUTS_SHOWN])
    more = len(layouts) - LAYOUTS_SHOWN
    return (head + body + " (docs/method.md, \"A range where messages move into a node\")."
            + (f" Non-contiguous datatypes among them (messages, layout): {shown}"
               + (f"; and {more} more layout(s)" if more > 0 else "") + "." if layouts else ""))


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


# Beyond this change a figure is said as a multiple: "+1265103.7 %" is wider than the
# column it sits in, and "×12,652" says the same.
AS_MULTIPLE_PCT = 1000.0


def change_words(pct: float | None) -> str:
    """A change predicted against recorded, in % ("+17.2 %"), or from +1000 % on as a
    multiple ("×18.0", "×12,652"); "" where there is none."""
    if pct is None or not math.isfinite(pct):
        return ""
    if pct < AS_MULTIPLE_PCT:
        return fmt_pct(pct, 1, sign=True, missing="")
    times = 1.0 + pct / 100.0
    return f"×{times:.1f}" if times < 100 else f"×{times:,.0f}"


def change_text(doc: dict[str, Any], key: str) -> str:
    """A job figure's change, predicted against recorded ("" where there is none)."""
    return change_words(doc["error_pct"][key])


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


LINK_HEADERS = ("", "direction", "messages", "data", "busy", "of the run", "waited",
                "wait in all", "longest")


def link_rows(doc: dict[str, Any]) -> list[tuple[str, ...]]:
    """Each link direction's use (predict.json's `links`, links.py) as text cells, the
    recorded side's first; none for a predict.json written before it had them, or where
    no message crosses nodes."""
    links = doc.get("links") or {}
    one_rank = bool((doc["target"].get("link") or {}).get("one_rank_per_node"))
    rows = []
    for side in ("recorded", "predicted"):
        for d in links.get(side) or []:
            name = (f"rank {d['from']} → rank {d['to']}"
                    if one_rank and side == "predicted" else f"{d['from']} → {d['to']}")
            share = d.get("busy_share")
            rows.append((side, name, f"{d['messages']:,}",
                         fmt_mib(d["bytes"], 1, below="bytes"), fmt_time(d["busy_s"]),
                         fmt_pct(100.0 * share if share is not None else None, 0),
                         f"{d['waited']:,}", fmt_time(d["wait_s"]),
                         fmt_time(d["longest_wait_s"])))
    return rows


def link_lines(doc: dict[str, Any]) -> list[str]:
    """link_rows for the terminal, as columns under one line that says what they are."""
    rows = link_rows(doc)
    if not rows:
        return []
    return ["Link directions (busy: their messages' G s, one at a time; the recorded side "
            "by the same rule at the recorded times):", *text_columns(LINK_HEADERS, rows)]


def text_columns(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Rows under their headers for the terminal, indented, the first two columns (what
    a row is) to the left, the figures to the right."""
    width = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    return ["  " + "  ".join(x.ljust(w) if i < 2 else x.rjust(w)
                             for i, (x, w) in enumerate(zip(r, width, strict=True))).rstrip()
            for r in [headers, *rows]]

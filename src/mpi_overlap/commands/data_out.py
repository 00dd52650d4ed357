"""`mpi_overlap.load(run_dir)`: a run directory as pandas DataFrames, for scripts and
notebooks, so that nobody has to walk the JSON by hand:

    import mpi_overlap
    run = mpi_overlap.load("mpi-overlap-runs/20261126-080527-profile-mpich")
    run.frames["by_function"].groupby("fn")["nonoverlap_s"].sum()

Frames: "figures" (the analysis' headline figures, one row each) for every run; for a
profile, one row per rank and entry of "totals", "by_bin", "by_function", "by_region"
(a `rank` column added), and the analysis' call sites, (post → completion) pairs,
waiting, advice and checks, each declared once in profile_frames.FRAMES with its columns
("call_sites", "pairs", "waiting", "waiting.by_function", ..., "advice", "checks",
"checks.by_rank", ...; docs/profiler.md, "Data out"); for a benchmark, every list of
records in its results (its points: "sizes", ...) flattened with pandas.json_normalize,
and a list nested one level in them as "outer.inner" (overhead: "directions.sizes", a
`direction` column beside)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.json_input import read_json
from ..profile.documents.profile_frames import plain_fields, profile_frames
from ..run.rundir import Run, load_run

PROFILE_TABLES = ("by_bin", "by_function", "by_region")


@dataclass
class RunData(Run):
    """A loaded run directory (rundir.Run: meta, result, analysis, label, status, ...)
    with its data as frames."""

    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    def report_tables(self) -> dict[str, pd.DataFrame]:
        """The tables of the run directory's report (report.json's "tables", the CSVs
        beside it), by caption, read back as the page shows them (text cells); {} when
        the directory holds no report."""
        doc_path = self.path / "report.json"
        if not doc_path.is_file():
            return {}
        listed = read_json(doc_path).get("tables") or []
        return {t["caption"]: pd.read_csv(self.path / t["csv"], dtype=str,
                                          keep_default_na=False)
                for t in listed if (self.path / t["csv"]).is_file()}


def _records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _profile_frames(result: dict[str, Any]) -> dict[str, pd.DataFrame]:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in ("totals", *PROFILE_TABLES)}
    for rank in result.get("ranks") or []:
        profile = rank.get("profile") or {}
        here = {"rank": rank.get("rank"), "host": rank.get("host")}
        if isinstance(profile.get("totals"), dict):
            rows["totals"].append({**here, **profile["totals"]})
        for name in PROFILE_TABLES:
            rows[name] += [{**here, **entry} for entry in profile.get(name) or []
                           if isinstance(entry, dict)]
    return {name: pd.json_normalize(r) for name, r in rows.items() if r}


def _record_frames(name: str, records: list[dict[str, Any]]) -> dict[str, pd.DataFrame]:
    """`name`: the records without their nested lists of records; `name.inner`: each
    nested list (one level: overhead's directions → sizes) with the outer record's plain
    fields beside every row."""
    nested = sorted({k for r in records for k, v in r.items() if _records(v)})
    frames = {name: pd.json_normalize([{k: v for k, v in r.items() if k not in nested}
                                       for r in records])}
    for inner in nested:
        rows = [{**plain_fields(r), **row}
                for r in records for row in (r.get(inner) or []) if isinstance(row, dict)]
        frames[f"{name}.{inner}"] = pd.json_normalize(rows)
    return frames


def _benchmark_frames(result: dict[str, Any]) -> dict[str, pd.DataFrame]:
    frames: dict[str, pd.DataFrame] = {}
    for key, value in (result.get("results") or {}).items():
        if _records(value):
            frames.update(_record_frames(key, value))
    return frames


def load_run_data(run_dir: str | Path) -> RunData:
    """The run directory's documents and frames; UserError when it is not one."""
    run = load_run(run_dir)
    frames: dict[str, pd.DataFrame] = {}
    figures = (run.analysis or {}).get("figures")
    if _records(figures):
        frames["figures"] = pd.json_normalize(figures)
    if run.result:
        frames.update(_profile_frames(run.result) if run.benchmark == "profile"
                      else _benchmark_frames(run.result))
    if run.benchmark == "profile" and isinstance(run.analysis, dict):
        frames.update(profile_frames(run.analysis))
    return RunData(path=run.path, meta=run.meta, result=run.result, analysis=run.analysis,
                   problems=run.problems, frames=frames)

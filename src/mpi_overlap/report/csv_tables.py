"""Every table of a report also as CSV, for scripts and spreadsheets: written from the
same HtmlTable objects the HTML page shows (one definition, rendered twice), into
`<report dir>/tables/NN-<caption>.csv`, with report.json listing them ("tables")."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..core.file_output import WriteError, write_text
from .html import HtmlTable, Section

TABLES_DIR = "tables"


def _slug(text: str, limit: int = 60) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "table"


def _csv_text(table: HtmlTable) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.headers)
    writer.writerows(table.rows)
    return buf.getvalue()


# the files this module writes, and only those, are replaced by the next report there
_OURS = re.compile(r"^\d{2,}-[a-z0-9-]+\.csv$")


def _remove_stale(tables_dir: Path) -> None:
    """An earlier report's CSVs in the same directory would be mistaken for this one's;
    anything else there (the --out directory is the user's) is left alone."""
    if tables_dir.is_dir():
        for path in tables_dir.iterdir():
            if path.is_file() and _OURS.match(path.name):
                path.unlink()


def write_csv_tables(sections: list[Section], out_dir: Path) -> list[dict[str, str]]:
    """One CSV per table of `sections`, in page order; [{section, caption, csv}] with
    paths relative to out_dir."""
    _remove_stale(out_dir / TABLES_DIR)
    listed = []
    number = 0
    try:
        for section in sections:
            for table in section.tables:
                number += 1
                name = f"{number:02d}-{_slug(table.caption or section.title)}.csv"
                write_text(out_dir / TABLES_DIR / name, _csv_text(table))
                listed.append({"section": section.title, "caption": table.caption,
                               "csv": f"{TABLES_DIR}/{name}"})
    except WriteError:
        # no half set of tables; and on a full disk the space they took is what the
        # caller needs to say in run.json that the report failed
        for entry in listed:
            (out_dir / entry["csv"]).unlink(missing_ok=True)
        raise
    return listed

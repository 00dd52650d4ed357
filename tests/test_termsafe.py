"""Terminal-safe output (termsafe.py; issue 14, "Why" 8): strings from outside (region and
function names, labels, paths, messages) never reach the terminal as control sequences,
are never parsed as rich markup, and a newline in a name does not split a table row."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.text import Text

from cli_helpers import run_cli
from mpi_overlap.core.termsafe import SafeConsole, Table, safe
from test_analysis_profile import Group, make_result, rank_doc

HOSTILE = ("evil\x1b[31mred\x1b[0m\nsecond line\x1b]8;;https://x.invalid\x07link\x1b]8;;\x07"
           "[/bold][link=https://y.invalid]z[/link]\u202eabc\x9b2J")


@pytest.mark.parametrize(("text", "shown"), [
    ("plain name", "plain name"),
    ("a\nb", "a\\nb"),
    ("tab\there", "tab\\there"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
    ("csi\x9b", "csi\\x9b"),
    ("del\x7f", "del\\x7f"),
    ("rtl\u202eoverride", "rtl\\u202eoverride"),
    ("undecodable \udcff byte", "undecodable \\xff byte"),
    ("µs — ünïcode ok", "µs — ünïcode ok"),
])
def test_safe_escapes_what_could_drive_a_terminal(text: str, shown: str) -> None:
    assert safe(text) == shown


def _render(table: Table) -> str:
    buf = io.StringIO()
    SafeConsole(file=buf, width=200, force_terminal=False).print(table)
    return buf.getvalue()


def test_a_hostile_cell_is_one_row_of_plain_text() -> None:
    plain, hostile = Table(title="t"), Table(title="t")
    for t in (plain, hostile):
        t.add_column("name")
        t.add_column("value")
    plain.add_row("benign", "1")
    hostile.add_row(HOSTILE, "1")  # a MarkupError before, and two rows' worth of lines
    out = _render(hostile)
    assert len(out.splitlines()) == len(_render(plain).splitlines())
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "[/bold][link=https://y.invalid]z[/link]" in out  # literal, not markup
    assert "evil\\x1b[31mred\\x1b[0m\\nsecond line" in out


def test_the_console_escapes_what_missed_safe_and_keeps_markup_off() -> None:
    buf = io.StringIO()
    console = SafeConsole(file=buf, width=200, force_terminal=True, color_system="standard")
    console.print(Text("styled \x1b]0;title\x07", style="bold"))
    console.print("[red]not markup[/red] \x1b[2J")
    out = buf.getvalue()
    plain = re.sub("\x1b\\[[0-9;]*m", "", out)  # rich's own style codes taken out
    assert "\\x1b]0;title" in plain and "\\x1b[2J" in plain  # (rich drops the BEL)
    assert "[red]not markup[/red]" in plain
    assert "\x1b[1m" in out  # rich's own style codes still work
    assert "\x1b]" not in out and "\x07" not in out and "\x1b[2J" not in out


def test_every_terminal_table_is_made_safe() -> None:
    src = Path(__file__).resolve().parents[1] / "src" / "mpi_overlap"
    direct = [str(p.relative_to(src)) for p in src.rglob("*.py")
              if re.search(r"^from rich\.table import|^import rich\.table", p.read_text(), re.M)
              and p.name != "termsafe.py"]
    assert direct == []


def test_report_of_a_profile_with_hostile_names(tmp_path: Path) -> None:
    from test_report_profile import write_run

    docs = [rank_doc(rank, [Group("MPI_Isend", HOSTILE, 1024, 2048, 5, 0.002, 0.001, 0.002)],
                     size=2, comp={HOSTILE: 0.04}, calls={"MPI_Wait": (5, 0.001)},
                     cases={"across-calls": 5})
            for rank in (0, 1)]
    run = write_run(tmp_path / "runs", "20250102-030405-profile-mpich", make_result(docs),
                    label="lab\x1b]0;t\x07el\nx")
    proc = run_cli("report", str(run), env={"MPI_OVERLAP_HOME": str(tmp_path / "state")},
                   timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
    assert "evil\\x1b[31mred" in proc.stdout and "lab\\x1b]0;t\\x07el\\nx" in proc.stdout
    assert not any(line.startswith("second line") for line in proc.stdout.splitlines())
    html = (run / "report.html").read_text()  # the HTML escapes with Jinja, as before
    assert "[link=https://y.invalid]z[/link]" in html and 'href="https://y.invalid' not in html

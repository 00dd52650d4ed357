"""The emulated nodes' names in /etc/hosts, as one marked block that `remove` takes out
again. The file is rewritten in place, not replaced: in containers it is often a bind
mount that a rename would fail on."""

from __future__ import annotations

from pathlib import Path

from .layout import CONTROLLER, Layout

HOSTS = Path("/etc/hosts")
BEGIN = "# >>> mpi-overlap cluster (mpi-overlap cluster down removes this block)"
END = "# <<< mpi-overlap cluster"


def _without_block(text: str) -> str:
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.rstrip("\n") == BEGIN:
            inside = True
        elif line.rstrip("\n") == END and inside:
            inside = False
        elif not inside:
            out.append(line)
    return "".join(out)


def _rewrite(text: str) -> None:
    with HOSTS.open("r+") as f:
        f.seek(0)
        f.write(text)
        f.truncate()


def add(layout: Layout) -> None:
    text = _without_block(HOSTS.read_text())
    if text and not text.endswith("\n"):
        text += "\n"
    lines = [BEGIN, f"{layout.controller_address} {CONTROLLER}",
             *(f"{n.address} {n.name}" for n in layout.node_list), END]
    _rewrite(text + "\n".join(lines) + "\n")


def present() -> bool:
    return BEGIN in HOSTS.read_text().splitlines()


def remove() -> None:
    text = HOSTS.read_text()
    if BEGIN in text.splitlines():
        _rewrite(_without_block(text))

"""The published sources the methods follow, cited by name in what users read (report
titles, help, findings, schema descriptions), in the docs and in code comments. Only what
the sources themselves state (title, authors, kind, year where given) is used.

docs/method.md ("Sources") lists the same five, keyed by the short names below."""

from __future__ import annotations

# key: the project's internal source number; never shown to users (they read SHORT / CITATIONS)
CITATIONS: dict[str, str] = {
    "000": "Shet, Sadayappan, Bernholdt, Nieplocha, Tipparaju: Characterization of "
           "Computation-Communication Overlap in Message-Passing Systems (report)",
    "001": "Balaji, Chan, Gropp, Thakur, Lusk: Non-Data-Communication Overheads in MPI: "
           "Analysis on Blue Gene/P",
    "002": "Colmenares, Andersen, Wei: An Overlap Study for Cluster Computing",
    "003": "Sandia MPI Micro-Benchmark Suite (SMB): mpi_overhead",
    "004": "Strohbeen: Overlapping Communication and Computation using Cray's Gemini "
           "Interconnect (Sandia, 2011)",
}

# short forms for titles and table captions
SHORT: dict[str, str] = {
    "000": "Shet et al.",
    "001": "Balaji et al.",
    "002": "Colmenares et al.",
    "003": "Sandia SMB",
    "004": "Strohbeen, Cray Gemini",
}


def cite(seed: str, where: str = "") -> str:
    """A short citation for a title: "Colmenares et al., §III-B"."""
    return SHORT[seed] + (f", {where}" if where else "")

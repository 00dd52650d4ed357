"""report.json (report-v1) as a typed model (core/schema.py): what report.html shows, for
scripts; its JSON schema generated from it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from ..analysis.documents import Figures
from ..core.schema import Document, register


class RunNoticesItem(Document, kw_only=True):
    level: str
    text: str


class Run(Document, kw_only=True, forbid_unknown_fields=True):
    label: str
    path: str
    benchmark: str
    toolchain: str
    run_status: str
    result_status: str | UnsetType | None = UNSET
    complete: bool
    has_analysis: bool
    notices: list[RunNoticesItem]
    summary: list[str]
    run: Annotated[dict[str, Any], Meta(description="run.json's fields that identify the launch")]
    provenance: dict[str, Any] | UnsetType | None = UNSET
    timer: dict[str, Any] | UnsetType | None = UNSET
    work: dict[str, Any] | UnsetType | None = UNSET
    warnings: list[Any]
    results: Annotated[
        Any, Meta(description="the benchmark's own block (its reporter's to_json), or null")
    ]


class ReportTablesItem(Document, kw_only=True, forbid_unknown_fields=True):
    section: str
    caption: str
    csv: Annotated[str, Meta(description="path relative to report.json")]


class ReportSummaryCardItemsItem(Document, kw_only=True, forbid_unknown_fields=True):
    item: str
    benchmark: str
    cells: dict[str, str]
    grades: Annotated[
        dict[str, Literal["good", "fair", "poor"] | None],
        Meta(
            description=(
                "the cell's colour: share hidden (or CPU free) >= 70 %, >= 30 %, "
                "below; null: not graded"
            )
        ),
    ]
    figures: dict[str, Figures]


class ReportSummaryCard(Document, kw_only=True, forbid_unknown_fields=True):
    """characterize: the card, a sentence per item and column with the numbers it was built
    from"""

    labels: list[str]
    items: list[ReportSummaryCardItemsItem]


class ReportFindingsItem(Document, kw_only=True, forbid_unknown_fields=True):
    benchmark: str
    toolchain: str
    label: str
    status: str
    finding: str
    path: str


class ReportSuite(Document, kw_only=True):
    name: str
    findings: list[Any]


class Report(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap report.json, version 1: what report.html shows, for scripts"""

    schema: Literal["mpi-overlap/report"]
    schema_version: Literal[1]
    generated_utc: str
    tool_version: str
    runs: list[Run]
    replication: Annotated[
        list[Any], Meta(description="launch groups compared (--launches), analysis/replication.py")
    ]
    tables: Annotated[
        list[ReportTablesItem],
        Meta(description="every table of the page as CSV, in page order (report/csv_tables.py)"),
    ]
    summary_card: Annotated[
        ReportSummaryCard | UnsetType,
        Meta(
            description=(
                "characterize: the card, a sentence per item and column with the "
                "numbers it was built from"
            )
        ),
    ] = UNSET
    findings: Annotated[
        list[ReportFindingsItem] | UnsetType,
        Meta(description="a suite's or characterize's one line per run"),
    ] = UNSET
    problems: Annotated[
        list[str] | UnsetType, Meta(description="steps that left no run directory")
    ] = UNSET
    suite: ReportSuite | UnsetType = UNSET


MODELS: dict[str, Any] = {
    "report-v1": Report,
}
register(MODELS)

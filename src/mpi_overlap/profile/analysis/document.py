"""The profile's analysis.json as a typed model (core/schema.py), its JSON schema generated
from it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...core.schema import Document, register, require_keys
from ..documents.models import ProfileLibraryS

# Per-rank measures that get min / median / max across ranks (profile.py computes them).
RANK_MEASURES = (
    "transfers",
    "xfer_s",
    "min_s",
    "max_s",
    "nonoverlap_s",
    "comp_s",
    "call_s",
    "min_pct",
    "max_pct",
    "mpi_share_pct",
)
# The cases of the method (§2.2) that count transfers.
CASES = ("in-call", "across-calls", "begin-only", "end-only")


class AnalysisProfileMethod(Document, kw_only=True, forbid_unknown_fields=True):
    name: Literal["overlap-bounds"]
    source: str
    nonoverlap: str
    percent_of: Literal["xfer_s"]
    bins: Annotated[
        list[Annotated[int, Meta(ge=1)]] | None,
        Meta(description="bin edges of the run (null: powers of two)"),
    ]
    table: Annotated[
        dict[str, Any] | None, Meta(description="the run's transfer-time table, verbatim")
    ]


RankIds = list[Annotated[int, Meta(ge=0)]]


Pct = Annotated[float, Meta(ge=0, le=100)] | None


class Measures(Document, kw_only=True):
    transfers: Annotated[int, Meta(ge=0)]
    xfer_s: Annotated[float, Meta(ge=0)]
    min_s: Annotated[float, Meta(ge=0, description="minimum overlapped transfer time")]
    max_s: Annotated[float, Meta(ge=0, description="maximum overlapped transfer time")]
    nonoverlap_s: Annotated[float, Meta(ge=0, description="xfer_s - max_s, at least 0")]
    min_pct: Annotated[Pct, Meta(description="100 min_s / xfer_s; null when xfer_s = 0")]
    max_pct: Annotated[Pct, Meta(description="100 max_s / xfer_s; null when xfer_s = 0")]


class AnalysisProfileJob(Measures, kw_only=True, forbid_unknown_fields=True):
    """sums over the ranks with data; percentages of those sums"""

    ranks: Annotated[int, Meta(ge=0)]
    comp_s: Annotated[float, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]
    nonoverlap_pct: Pct
    nonoverlap_max_s: Annotated[
        float,
        Meta(
            ge=0,
            description=(
                "xfer_s - min_s: the most transfer time that may not have been overlapped"
            ),
        ),
    ]
    mpi_share_pct: Annotated[Pct, Meta(description="100 call_s / (call_s + comp_s)")]


class Rank(Measures, kw_only=True, forbid_unknown_fields=True):
    rank: int
    status: Annotated[
        str,
        Meta(description="the rank document's status (complete, incomplete, running, disabled)"),
    ]
    reason: str | None
    host: str | None
    wall_s: float | None
    in_totals: Annotated[
        bool,
        Meta(
            description=(
                "false for disabled ranks: not in job figures, across-rank statistics or rankings"
            )
        ),
    ]
    comp_s: Annotated[float, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]
    comp_cpu_s: Annotated[
        Annotated[float, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "comp_s less descheduled_s: the computation the rank did on the CPU "
                "(profile/analysis/cpu_time.py); absent where the rank document has "
                "no cpu figures"
            )
        ),
    ] = UNSET
    descheduled_s: Annotated[
        Annotated[float, Meta(ge=0)] | UnsetType | None,
        Meta(
            description=(
                "of comp_s, the time the rank was descheduled for other processes: "
                "min(cpu.off_cpu_s, cpu.run_delay_s) of its document (off_cpu_s where"
                " the kernel gives no run delay); absent without cpu figures"
            )
        ),
    ] = UNSET
    nonoverlap_pct: Pct
    mpi_share_pct: Annotated[Pct, Meta(description="100 call_s / (call_s + comp_s)")]


class Across(Document, kw_only=True, forbid_unknown_fields=True):
    """a measure over the ranks with a value (null percentages left out); ties go to the lowest
    rank; median of an even count is the mean of the middle two"""

    n: Annotated[int, Meta(ge=0)]
    min: float | None
    min_rank: int | None
    median: float | None
    max: float | None
    max_rank: int | None


class AnalysisProfileWorstRank(Document, kw_only=True, forbid_unknown_fields=True):
    """the rank with the most non-overlapped time; null when no time was lost"""

    rank: Annotated[int, Meta(ge=0)]
    nonoverlap_s: Annotated[float, Meta(ge=0)]
    share_pct: Pct
    min_pct: Pct
    max_pct: Pct


class Ranked(Measures, kw_only=True):
    share_pct: Annotated[
        Annotated[float, Meta(ge=0)] | None,
        Meta(description=("of the ranking's total non-overlapped time; null when that total is 0")),
    ]
    ranks: Annotated[int, Meta(ge=0, description="ranks whose profile has this entry")]
    worst_rank: Annotated[
        int | None, Meta(description="the rank losing most here; null when none lost any")
    ]


class Region(Ranked, kw_only=True, forbid_unknown_fields=True):
    region: str
    comp_s: Annotated[float, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]


class Function(Ranked, kw_only=True, forbid_unknown_fields=True):
    fn: Annotated[
        str,
        Meta(
            description=(
                "posting function of the transfers (completing function for end-only ones)"
            )
        ),
    ]
    calls: Annotated[int, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]
    call_share_pct: Annotated[float, Meta(ge=0)] | None


class Bin(Ranked, kw_only=True, forbid_unknown_fields=True):
    lo: Annotated[int, Meta(ge=0, description="bytes, inclusive")]
    hi: Annotated[int | None, Meta(description="bytes, exclusive; null: no upper edge")]
    label: str


class SitePair(Ranked, kw_only=True, forbid_unknown_fields=True):
    """the transfers posted at one call site and completed at another (docs/profiler.md, Call
    sites); a site is 'file:line (function)' where debug information allows, 'unknown' where
    it was not observed"""

    post: str
    post_fn: str | None
    end: str
    end_fn: str | None
    polled: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "transfers with an MPI_Test-family call made between their post and "
                "their completion"
            )
        ),
    ] = UNSET


class Site(Ranked, kw_only=True, forbid_unknown_fields=True):
    """one call site: the transfers it posted (post_sites) or completed (end_sites); calls,
    call_s: its outermost MPI calls and their time, summed over ranks"""

    site: str
    fn: str | None
    calls: Annotated[int, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]


class AnalysisProfileRankings(Document, kw_only=True, forbid_unknown_fields=True):
    """summed over ranks, sorted by non-overlapped time (desc), then transfer time (desc);
    share_pct: of the ranking's total non-overlapped time"""

    regions: list[Region]
    functions: list[Function]
    bins: list[Bin]
    pairs: list[SitePair] | UnsetType = UNSET
    post_sites: list[Site] | UnsetType = UNSET
    end_sites: list[Site] | UnsetType = UNSET


class AnalysisProfileCallTimeItem(Document, kw_only=True, forbid_unknown_fields=True):
    fn: str
    calls: Annotated[int, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]
    share_pct: Annotated[
        Annotated[float, Meta(ge=0)] | None, Meta(description="of all MPI call time")
    ]


class AnalysisProfileBinsByRankBinsItem(Document, kw_only=True, forbid_unknown_fields=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None
    label: str


class AnalysisProfileBinsByRank(Document, kw_only=True, forbid_unknown_fields=True):
    """matrices indexed [bin][rank] in the order of bins and ranks: overlap range per size bin
    and rank (null where the rank has no transfer time in the bin)"""

    ranks: RankIds
    bins: list[AnalysisProfileBinsByRankBinsItem]
    min_pct: list[list[Pct]]
    max_pct: list[list[Pct]]
    xfer_s: list[list[Annotated[float, Meta(ge=0)]]]
    transfers: list[list[Annotated[int, Meta(ge=0)]]]


class Note(Document, kw_only=True, forbid_unknown_fields=True):
    name: Annotated[str, Meta(description="case or counter name")]
    source: Literal["case", "counter"]
    count: Annotated[int, Meta(ge=1, description="summed over ranks")]
    ranks: Annotated[
        RankIds,
        Meta(
            description=(
                "ranks where it is not zero: the lowest 16 of them (the job's "
                "statistics, native/profiler/mop_job_stats.h)"
            )
        ),
    ]
    ranks_count: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType, Meta(description="how many ranks it is not zero on")
    ] = UNSET
    meaning: str


class AnalysisProfileProgress(Document, kw_only=True):
    """what the toolchain's newest complete run of the benchmark declaring this evidence key
    (spec.Evidence) under the profile's --out directory says of the MPI's progress between
    calls (profile/run/toolchain_evidence.py), quoted by the progress advice; run null when
    there is none"""

    toolchain: str | UnsetType = UNSET
    run: str | UnsetType | None = UNSET
    finding: str | UnsetType | None = UNSET


class AnalysisProfileEagerLimit(Document, kw_only=True):
    """the eager limit bracketed by the toolchain's newest complete run of the benchmark
    declaring this evidence key (spec.Evidence) under the profile's --out directory
    (profile/run/toolchain_evidence.py), used by the eager-limit advice; null when there is
    none"""

    run: str | UnsetType = UNSET
    last_yes_bytes: int | UnsetType = UNSET
    first_no_bytes: int | UnsetType = UNSET
    setting: str | UnsetType | None = UNSET
    setting_bytes: int | UnsetType | None = UNSET
    finding: str | UnsetType = UNSET


Share = Annotated[float, Meta(ge=0, le=1)]
Count = Annotated[int, Meta(ge=0)]


class AnalysisProfileCpuShareRank(Document, kw_only=True, forbid_unknown_fields=True):
    """one rank's samples under perf record: in the library, in all, their share with its
    95 % interval (Clopper-Pearson); rank null where the launcher set no rank variable"""

    rank: Count | None
    file: str
    event: str | None
    library_samples: Count
    samples: Count
    lost_samples: Count
    share: Share | None
    ci95_low: Share | None
    ci95_high: Share | None


class AnalysisProfileCpuShare(Document, kw_only=True, forbid_unknown_fields=True):
    """the library's own share of the ranks' CPU samples from one more profiled launch with
    every rank under perf record (profile/run/perf_share.py): per rank, and pooled over the
    ranks with its 95 % interval; a lower bound of the profiler's cost (leaves_out says
    what is not in it). unavailable says why there is no figure (no perf, perf refused,
    the launch failed), null when there is one"""

    measure: str
    perf_version: str | None
    frequency_hz: Annotated[int, Meta(ge=1)]
    library: str
    leaves_out: str
    unavailable: str | None
    launch: dict[str, Any] | None
    ranks: list[AnalysisProfileCpuShareRank]
    library_samples: Count
    samples: Count
    share: Share | None
    ci95_low: Share | None
    ci95_high: Share | None


class AnalysisProfileCost(Document, kw_only=True):
    """profile --compare-bare: pairs of launches without/with the profiler, interleaved, timed
    whole; ratio = geometric mean of with/without, ci95 the Student-t interval of the mean
    log ratio (profile/run/compare_bare.py); null without --compare-bare"""

    ratio: float | UnsetType | None = UNSET
    ci95_low: float | UnsetType | None = UNSET
    ci95_high: float | UnsetType | None = UNSET
    pairs: list[Any] | UnsetType = UNSET
    launches: list[Any] | UnsetType = UNSET
    library_cpu_share: Annotated[
        AnalysisProfileCpuShare | UnsetType,
        Meta(description="the library's own share of the ranks' CPU samples (perf); "
                         "absent where perf was not tried (the launches were stopped, "
                         "runs before it)"),
    ] = UNSET


class AnalysisProfileAdviceItem(Document, kw_only=True, forbid_unknown_fields=True):
    rule: Literal["progress", "move-computation", "nonblocking", "imbalance", "eager-limit"]
    text: str
    sites: dict[str, str | None]
    evidence: dict[str, Any]
    bound_s: Annotated[float, Meta(ge=0)]


class AnalysisProfileCallsites(Document, kw_only=True):
    """how many call sites the run's ranks recorded and how many resolved to a source line
    (profile/documents/callsites.py), with notes on the rest; null for runs collected before
    call sites"""

    sites: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    with_line: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    notes: list[str] | UnsetType = UNSET


class AnalysisProfileLibraryTime(ProfileLibraryS, kw_only=True, forbid_unknown_fields=True):
    """the profiler's own time once per launch (profile/analysis/library_time.py): the slowest
    rank's time in MPI_Init after PMPI_Init and in MPI_Finalize up to its final document
    (the rank documents' library_s), rank 0's gather and reduction; per_launch_s their sum.
    Null where no rank recorded it (libraries before it, statistics-only runs)"""


class AnalysisProfileJobStats(Document, kw_only=True):
    """where the job's sums and rankings came from: 'library', rank 0's reduction at
    MPI_Finalize (profile.stats.json, native/profiler/mop_reduce.h) with its cost, or
    'documents', the same reduction in the same order over the rank documents
    (profile/documents/job_stats.py)"""

    source: Literal["library", "documents"]
    ranks: Annotated[int, Meta(ge=1)] | UnsetType = UNSET
    reduce_s: float | UnsetType | None = UNSET
    largest_message: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    documents: Annotated[
        bool | UnsetType,
        Meta(
            description=(
                "false: the run kept no rank document (profile --statistics-only); "
                "the per-rank entries come from the statistics' rows, and call sites,"
                " each rank's size bins, host, top function and trace are missing"
            )
        ),
    ] = UNSET


class AnalysisProfileJobFile(Document, kw_only=True):
    """result.json's job_file: rank 0's record of gathering every rank's document into
    profile.job.jsonl at MPI_Finalize (native/profiler/mop_gather.h); null for runs without
    one"""

    ranks: Annotated[int, Meta(ge=1)] | UnsetType = UNSET
    in_file: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    bytes_: Annotated[int, Meta(ge=0)] | UnsetType = field(name="bytes", default=UNSET)
    gather_s: float | UnsetType | None = UNSET


class CheckPart(Document, kw_only=True, forbid_unknown_fields=True):
    """one check summed over ranks: transfers judged and their time, the flagged ones
    (flagged_transfers, flagged_xfer_s) and how far their table time exceeds their interval
    (excess_s); in_call adds the calls holding in-call transfers (calls, call_s), the sum of
    each call's longest transfer (longest_s), the calls shorter than it (calls_beyond,
    beyond_s) and the transfers left unjudged (unchecked)"""

    transfers: Annotated[int, Meta(ge=0)]
    xfer_s: Annotated[float, Meta(ge=0)]
    flagged_transfers: Annotated[int, Meta(ge=0)]
    flagged_xfer_s: Annotated[float, Meta(ge=0)]
    excess_s: Annotated[float, Meta(ge=0)]
    calls: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    call_s: Annotated[float, Meta(ge=0)] | UnsetType = UNSET
    longest_s: Annotated[float, Meta(ge=0)] | UnsetType = UNSET
    calls_beyond: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    beyond_s: Annotated[float, Meta(ge=0)] | UnsetType = UNSET
    unchecked: Annotated[int, Meta(ge=0)] | UnsetType = UNSET


class ChecksRanksItem(Document, kw_only=True, forbid_unknown_fields=True):
    rank: Annotated[int, Meta(ge=0)]
    xfer_s: Annotated[float, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]
    in_call_xfer_s: Annotated[float, Meta(ge=0)]
    in_call_calls: Annotated[int, Meta(ge=0)]
    in_call_calls_beyond: Annotated[
        int, Meta(ge=0, description="calls shorter than their longest in-call transfer")
    ]
    in_call_call_s: Annotated[float, Meta(ge=0)]
    in_call_longest_s: Annotated[float, Meta(ge=0)]
    flagged_transfers: Annotated[int, Meta(ge=0)]
    flagged_xfer_s: Annotated[float, Meta(ge=0)]
    flagged_pct: Annotated[Pct, Meta(description="of the rank's transfer time")]
    beyond_s: Annotated[float, Meta(ge=0)]


class CheckCell(Document, kw_only=True):
    check: Literal["in-call", "across-calls"]
    transfers: Annotated[int, Meta(ge=1)]
    xfer_s: Annotated[float, Meta(ge=0, description="table transfer time of the flagged transfers")]
    excess_s: Annotated[float, Meta(ge=0)]
    pct: Annotated[
        Pct, Meta(description="of the entry's transfer time (all its transfers, summed over ranks)")
    ]
    ranks: Annotated[
        RankIds,
        Meta(
            description=(
                "ranks where the check flagged transfers of this entry: the lowest 16 of them"
            )
        ),
    ]
    ranks_count: Annotated[
        Annotated[int, Meta(ge=1)] | UnsetType,
        Meta(description="how many ranks it flagged transfers of this entry on"),
    ] = UNSET


class ChecksByFunctionItem(CheckCell, kw_only=True, forbid_unknown_fields=True):
    fn: str


class ChecksByBinItem(CheckCell, kw_only=True, forbid_unknown_fields=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None
    label: str


class Checks(Document, kw_only=True, forbid_unknown_fields=True):
    """checks on the bounds (docs/method.md, 'Checks on the bounds') summed over the ranks with
    data: transfers whose table transfer time does not fit the interval their events give
    them, whose bounds are therefore not trustworthy"""

    available: Annotated[
        bool,
        Meta(description=("false when no rank's profile has checks (written before they existed)")),
    ]
    ranks_without: Annotated[
        RankIds, Meta(description="ranks with data whose profile has no checks")
    ]
    threshold_pct: Annotated[float, Meta(ge=0, le=100)]
    xfer_s: Annotated[float, Meta(ge=0, description="the job's transfer time")]
    flagged_transfers: Annotated[int, Meta(ge=0)]
    flagged_xfer_s: Annotated[float, Meta(ge=0)]
    flagged_pct: Annotated[Pct, Meta(description="100 flagged_xfer_s / xfer_s")]
    flagged: Annotated[
        bool,
        Meta(
            description=(
                "flagged_pct > threshold_pct: the findings say so after their first sentence"
            )
        ),
    ]
    beyond_s: Annotated[
        float,
        Meta(
            ge=0, description="transfer time beyond what the wall clock allows, summed over ranks"
        ),
    ]
    in_call: CheckPart
    across_calls: CheckPart
    ranks: list[ChecksRanksItem]
    by_function: Annotated[
        list[ChecksByFunctionItem],
        Meta(description="per posting function and check, by flagged transfer time (desc)"),
    ]
    by_bin: Annotated[list[ChecksByBinItem], Meta(description="per size bin and check, by size")]


class AnalysisProfileTraceFilesItem(Document, kw_only=True, forbid_unknown_fields=True):
    rank: Annotated[int, Meta(ge=0)]
    file: str | None
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    cap_bytes: Annotated[int, Meta(ge=0)]
    events: Annotated[int, Meta(ge=0)]
    dropped_events: Annotated[int, Meta(ge=0)]
    dropped_transfers: Annotated[int, Meta(ge=0)]
    truncated: bool
    error: str | None


class AnalysisProfileTrace(Document, kw_only=True, forbid_unknown_fields=True):
    """the run's timeline traces (profile --trace), null when none was asked for"""

    files: list[AnalysisProfileTraceFilesItem]
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    truncated_ranks: RankIds
    failed_ranks: Annotated[
        RankIds, Meta(description="ranks whose trace could not be written (see error)")
    ]


class TwoSidedTableRow(Document, kw_only=True, forbid_unknown_fields=True):
    """the two-sided bounds of a row of its tables (a function, size bin or region)"""

    refined: Annotated[int, Meta(ge=0)]
    min_s: Annotated[float, Meta(ge=0)]
    max_s: Annotated[float, Meta(ge=0)]
    nonoverlap_s: Annotated[float, Meta(ge=0)]
    min_pct: Annotated[float, Meta(ge=0, le=100)] | None
    max_pct: Annotated[float, Meta(ge=0, le=100)] | None


class AnalysisProfileTwoSidedJob(TwoSidedTableRow, kw_only=True):
    xfer_s: Annotated[float, Meta(ge=0)]


class AnalysisProfileTwoSidedRanksItem(AnalysisProfileTwoSidedJob, kw_only=True):
    rank: Annotated[int, Meta(ge=0)]


class AnalysisProfileTwoSidedTables(Document, kw_only=True, forbid_unknown_fields=True):
    functions: dict[str, TwoSidedTableRow]
    bins: dict[str, TwoSidedTableRow]
    regions: dict[str, TwoSidedTableRow]


class AnalysisProfileTwoSidedWaitingRanksItem(Document, kw_only=True, forbid_unknown_fields=True):
    rank: Annotated[int, Meta(ge=0)]
    waiting_s: Annotated[float, Meta(ge=0)]
    late_sender_s: Annotated[float, Meta(ge=0)]
    late_receiver_s: Annotated[float, Meta(ge=0)]
    collective_s: Annotated[float, Meta(ge=0)]
    comp_s: Annotated[float, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]
    xfer_s: Annotated[float, Meta(ge=0)]
    nonoverlap_s: Annotated[float, Meta(ge=0)]
    other_call_s: Annotated[float, Meta(ge=0)]


class AnalysisProfileTwoSidedWaitingFunctionsItem(
    Document, kw_only=True, forbid_unknown_fields=True
):
    fn: str
    waiting_s: Annotated[float, Meta(ge=0)]
    calls: Annotated[int, Meta(ge=0)]
    share_pct: float | None
    late_sender_s: Annotated[float, Meta(ge=0)]
    late_receiver_s: Annotated[float, Meta(ge=0)]
    collective_s: Annotated[float, Meta(ge=0)]


class AnalysisProfileTwoSidedWaitingBinsItem(Document, kw_only=True, forbid_unknown_fields=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None
    label: str
    waiting_s: Annotated[float, Meta(ge=0)]
    calls: Annotated[int, Meta(ge=0)]
    share_pct: float | None
    late_sender_s: Annotated[float, Meta(ge=0)]
    late_receiver_s: Annotated[float, Meta(ge=0)]
    collective_s: Annotated[float, Meta(ge=0)]


class AnalysisProfileTwoSidedWaitingRegionsItem(Document, kw_only=True, forbid_unknown_fields=True):
    region: str
    waiting_s: Annotated[float, Meta(ge=0)]
    calls: Annotated[int, Meta(ge=0)]
    share_pct: float | None
    late_sender_s: Annotated[float, Meta(ge=0)]
    late_receiver_s: Annotated[float, Meta(ge=0)]
    collective_s: Annotated[float, Meta(ge=0)]


class AnalysisProfileTwoSidedWaiting(Document, kw_only=True, forbid_unknown_fields=True):
    total_s: Annotated[float, Meta(ge=0)]
    late_sender_s: Annotated[float, Meta(ge=0)]
    late_receiver_s: Annotated[float, Meta(ge=0)]
    collective_s: Annotated[float, Meta(ge=0)]
    calls: Annotated[int, Meta(ge=0)]
    collectives_analysed: Annotated[int, Meta(ge=0)]
    clock_error_s: float | None
    ranks: list[AnalysisProfileTwoSidedWaitingRanksItem]
    functions: list[AnalysisProfileTwoSidedWaitingFunctionsItem]
    bins: list[AnalysisProfileTwoSidedWaitingBinsItem]
    regions: list[AnalysisProfileTwoSidedWaitingRegionsItem]


class AnalysisProfileTwoSided(Document, kw_only=True, forbid_unknown_fields=True):
    """both ends of every message, from the timeline traces of a `profile --trace` run
    (profile/analysis/twosided.py; docs/method.md, 'Both ends of a message', 'Waiting');
    null when the run wrote no trace"""

    available: Annotated[bool, Meta(description="false: not analysed, for `reason`")]
    reason: str | None
    clock_error_s: Annotated[
        Annotated[float, Meta(ge=0)] | UnsetType | None,
        Meta(description="the largest alignment error of a rank's clock against rank 0's"),
    ] = UNSET
    unaligned_ranks: list[Annotated[int, Meta(ge=0)]] | UnsetType = UNSET
    matched: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    unmatched_sends: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    unmatched_receives: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    unnamed: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(description="ends without a communicator, tag or known peer"),
    ] = UNSET
    collectives: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    collectives_mismatched: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    refined_senders: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    refined_receivers: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    receivers_early: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "refined receives whose send was posted before them: their window "
                "reaches back before the post"
            )
        ),
    ] = UNSET
    in_call_raised: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "blocking receives ([0, 0] from one end) with a two-sided lower bound"
                " above 0: it rests on the table's transfer time exceeding their call"
            )
        ),
    ] = UNSET
    receivers_arrived: Annotated[
        Annotated[int, Meta(ge=0)] | UnsetType,
        Meta(
            description=(
                "refined receives of eager messages whose data had arrived before the"
                " receive was posted (by the table's transfer model: the send's "
                "completion plus the latency L): the receive holds o_r, the rest lies"
                ' before it (docs/method.md, "The transfer model\'s parts")'
            )
        ),
    ] = UNSET
    clamped: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    inconsistent: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    job: AnalysisProfileTwoSidedJob | UnsetType = UNSET
    ranks: list[AnalysisProfileTwoSidedRanksItem] | UnsetType = UNSET
    tables: AnalysisProfileTwoSidedTables | UnsetType = UNSET
    waiting: AnalysisProfileTwoSidedWaiting | UnsetType = UNSET


class AnalysisProfileTableInterval(Document, kw_only=True, forbid_unknown_fields=True):
    """the overlap range the job's headline could take within the transfer-time table's 95 %
    intervals, a conservative bound (profile/analysis/table_sensitivity.py; docs/method.md,
    "Caveats that change the answer"); null where the table has no intervals (format 3 or
    older) or cannot be read again"""

    min_pct: Annotated[float, Meta(ge=0, le=100)]
    max_pct: Annotated[float, Meta(ge=0, le=100)]


class AnalysisProfileHeadlineIdleRanksItem(Document, kw_only=True, forbid_unknown_fields=True):
    rank: Annotated[int, Meta(ge=0)]
    mpi_share_pct: Annotated[float, Meta(ge=0, le=100)] | None
    call_s: Annotated[float, Meta(ge=0)]
    comp_s: Annotated[float, Meta(ge=0)]
    top_fn: str | None
    top_fn_share_pct: Annotated[float, Meta(ge=0, le=100)] | None


class AnalysisProfileHeadline(Document, kw_only=True, forbid_unknown_fields=True):
    """what the findings lead with (profile/analysis/headline.py): an idle rank, waiting for
    late partners, MPI time the transfers do not explain, or (text null) the non-overlapped
    transfer time of the first finding"""

    kind: Literal["idle-rank", "waiting", "mpi-time-unexplained", "transfer", "withheld"]
    text: str | None
    table_caveat: Annotated[
        str | UnsetType,
        Meta(
            description=(
                "present when transfers were priced with a class of the table not "
                "measured for them (inter_as_intra): the sentence that leads the "
                "findings"
            )
        ),
    ] = UNSET
    idle_ranks: list[AnalysisProfileHeadlineIdleRanksItem]


class AnalysisProfile(Document, kw_only=True, forbid_unknown_fields=True):
    """mpi-overlap analysis of a profile run, version 1: Written by
    mpi_overlap.profile.analysis.profile.analyze_profile from the result.json of
    `mpi-overlap profile` (profile-run-v1): every rank's profile merged across ranks.
    Method: Shet et al. §2.2-2.3 (docs/profiler.md). Times in seconds; percentages of
    transfer time (xfer_s) unless named otherwise; nonoverlap_s = xfer_s - max_s, the least
    transfer time that was not overlapped."""

    schema: Literal["mpi-overlap/analysis"]
    schema_version: Literal[1]
    benchmark: Literal["profile"]
    method: AnalysisProfileMethod
    status: Annotated[
        Literal["complete", "incomplete"],
        Meta(description="complete when every expected rank wrote a complete profile"),
    ]
    ranks_expected: Annotated[int, Meta(ge=0)]
    ranks_reported: RankIds
    missing_ranks: Annotated[RankIds, Meta(description="ranks that wrote no profile")]
    partial_ranks: Annotated[
        RankIds,
        Meta(
            description=(
                "ranks with status incomplete or running: figures up to their last document"
            )
        ),
    ]
    disabled_ranks: Annotated[
        RankIds, Meta(description="ranks that refused profiling: in no figure")
    ]
    warnings: list[str]
    job: Annotated[
        AnalysisProfileJob,
        Meta(description="sums over the ranks with data; percentages of those sums"),
    ]
    ranks: list[Rank]
    across_ranks: Annotated[
        dict[str, Across],
        Meta(
            extra_json_schema={"required": list(RANK_MEASURES)}
        ),
    ]
    worst_rank: Annotated[
        AnalysisProfileWorstRank | None,
        Meta(
            description=("the rank with the most non-overlapped time; null when no time was lost")
        ),
    ]
    rankings: Annotated[
        AnalysisProfileRankings,
        Meta(
            description=(
                "summed over ranks, sorted by non-overlapped time (desc), then "
                "transfer time (desc); share_pct: of the ranking's total "
                "non-overlapped time"
            )
        ),
    ]
    call_time: Annotated[
        list[AnalysisProfileCallTimeItem],
        Meta(
            description=("MPI call time per function summed over ranks, sorted by call time (desc)")
        ),
    ]
    bins_by_rank: Annotated[
        AnalysisProfileBinsByRank,
        Meta(
            description=(
                "matrices indexed [bin][rank] in the order of bins and ranks: overlap"
                " range per size bin and rank (null where the rank has no transfer "
                "time in the bin)"
            )
        ),
    ]
    cases: Annotated[
        Annotated[
            dict[str, Annotated[int, Meta(ge=0)]],
            Meta(
                extra_json_schema={"required": list(CASES)}
            ),
        ],
        Meta(description="transfers per case of the method (§2.2), summed over ranks"),
    ]
    counters: Annotated[
        dict[str, Annotated[int, Meta(ge=0)]],
        Meta(description="profiler counters summed over ranks (outstanding_peak: the maximum)"),
    ]
    unattributed: Annotated[
        list[Note],
        Meta(
            description=(
                "every non-zero case or counter meaning some transfer time was not "
                "attributed precisely"
            )
        ),
    ]
    progress: Annotated[
        AnalysisProfileProgress | UnsetType | None,
        Meta(
            description=(
                "what the toolchain's newest complete run of the benchmark declaring "
                "this evidence key (spec.Evidence) under the profile's --out "
                "directory says of the MPI's progress between calls "
                "(profile/run/toolchain_evidence.py), quoted by the progress advice; "
                "run null when there is none"
            )
        ),
    ] = UNSET
    eager_limit: Annotated[
        AnalysisProfileEagerLimit | UnsetType | None,
        Meta(
            description=(
                "the eager limit bracketed by the toolchain's newest complete run of "
                "the benchmark declaring this evidence key (spec.Evidence) under the "
                "profile's --out directory (profile/run/toolchain_evidence.py), used "
                "by the eager-limit advice; null when there is none"
            )
        ),
    ] = UNSET
    cost: Annotated[
        AnalysisProfileCost | UnsetType | None,
        Meta(
            description=(
                "profile --compare-bare: pairs of launches without/with the profiler,"
                " interleaved, timed whole; ratio = geometric mean of with/without, "
                "ci95 the Student-t interval of the mean log ratio "
                "(profile/run/compare_bare.py); null without --compare-bare"
            )
        ),
    ] = UNSET
    advice: Annotated[
        list[AnalysisProfileAdviceItem] | UnsetType,
        Meta(
            description=(
                "what to change, where, on which figures, and at most how much it can"
                " hide or save; largest bound first (profile/analysis/advice.py, "
                "docs/profiler.md Advice)"
            )
        ),
    ] = UNSET
    callsites: Annotated[
        AnalysisProfileCallsites | UnsetType | None,
        Meta(
            description=(
                "how many call sites the run's ranks recorded and how many resolved "
                "to a source line (profile/documents/callsites.py), with notes on the"
                " rest; null for runs collected before call sites"
            )
        ),
    ] = UNSET
    library_time: Annotated[
        AnalysisProfileLibraryTime | UnsetType | None,
        Meta(
            description=(
                "the profiler's own time once per launch "
                "(profile/analysis/library_time.py): the slowest rank's time in "
                "MPI_Init after PMPI_Init and in MPI_Finalize up to its final "
                "document (the rank documents' library_s), rank 0's gather and "
                "reduction; per_launch_s their sum. Null where no rank recorded it "
                "(libraries before it, statistics-only runs)"
            )
        ),
    ] = UNSET
    job_stats: Annotated[
        AnalysisProfileJobStats | UnsetType,
        Meta(
            description=(
                "where the job's sums and rankings came from: 'library', rank 0's "
                "reduction at MPI_Finalize (profile.stats.json, "
                "native/profiler/mop_reduce.h) with its cost, or 'documents', the "
                "same reduction in the same order over the rank documents "
                "(profile/documents/job_stats.py)"
            )
        ),
    ] = UNSET
    job_file: Annotated[
        AnalysisProfileJobFile | UnsetType | None,
        Meta(
            description=(
                "result.json's job_file: rank 0's record of gathering every rank's "
                "document into profile.job.jsonl at MPI_Finalize "
                "(native/profiler/mop_gather.h); null for runs without one"
            )
        ),
    ] = UNSET
    info_counters: Annotated[
        list[Note],
        Meta(
            description=("non-zero counters that change no measure (cancelled, MPI_PROC_NULL, ...)")
        ),
    ]
    findings: Annotated[list[str], Meta(description="sentences computed from the figures above")]
    checks: Checks
    trace: Annotated[
        AnalysisProfileTrace | UnsetType | None,
        Meta(
            description=(
                "the run's timeline traces (profile --trace), null when none was asked for"
            )
        ),
    ] = UNSET
    two_sided: Annotated[
        AnalysisProfileTwoSided | UnsetType | None,
        Meta(
            description=(
                "both ends of every message, from the timeline traces of a `profile "
                "--trace` run (profile/analysis/twosided.py; docs/method.md, 'Both "
                "ends of a message', 'Waiting'); null when the run wrote no trace"
            )
        ),
    ] = UNSET
    disturbed: Annotated[
        Literal[True] | UnsetType,
        Meta(
            description=(
                "the run guard's mark on a disturbed run's view (run/run_guard.py "
                "apply): its first finding and headline carry it; absent otherwise"
            )
        ),
    ] = UNSET
    withheld: Annotated[
        Literal["oversubscribed"] | UnsetType,
        Meta(
            description=(
                "the run guard's view of an oversubscribed run (run/run_guard.py "
                "apply): its overlap figures and advice are no findings; absent "
                "otherwise"
            )
        ),
    ] = UNSET
    table_interval: Annotated[
        AnalysisProfileTableInterval | UnsetType | None,
        Meta(
            description=(
                "the overlap range the job's headline could take within the "
                "transfer-time table's 95 % intervals, a conservative bound "
                '(profile/analysis/table_sensitivity.py; docs/method.md, "Caveats '
                'that change the answer"); null where the table has no intervals '
                "(format 3 or older) or cannot be read again"
            )
        ),
    ] = UNSET
    headline: Annotated[
        AnalysisProfileHeadline | UnsetType,
        Meta(
            description=(
                "what the findings lead with (profile/analysis/headline.py): an idle "
                "rank, waiting for late partners, MPI time the transfers do not "
                "explain, or (text null) the non-overlapped transfer time of the "
                "first finding"
            )
        ),
    ] = UNSET

    def __post_init__(self) -> None:
        require_keys(self.across_ranks, "across_ranks", RANK_MEASURES)
        require_keys(self.cases, "cases", CASES)


MODELS: dict[str, Any] = {
    "analysis-profile-v1": AnalysisProfile,
}
register(MODELS)

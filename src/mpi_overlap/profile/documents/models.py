"""The profiler's documents as typed models (core/schema.py): one rank's profile
(profile.rank-N.json), the job's reduced statistics (profile.stats.json) and the profile
run's result.json that holds them. Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...core.schema import Document, register, require_keys


class ProfileRankTable(Document, kw_only=True):
    path: str | None
    machine_fp: str
    toolchain_fp: str
    forced: bool
    hash: Annotated[
        Annotated[str, Meta(pattern="^[0-9a-f]{16}$")] | UnsetType | None,
        Meta(description="FNV-1a 64 of the table file's bytes as read at MPI_Init"),
    ] = UNSET
    created: Annotated[
        str | UnsetType | None, Meta(description="the table's 'created' time stamp")
    ] = UNSET
    verdict: Annotated[
        Literal["ok", "noisy", "suspect", "unverified", "unknown"] | UnsetType,
        Meta(
            description=(
                "the table's quality verdict (unverified: a format without one; "
                "unknown: the table could not be read)"
            )
        ),
    ] = UNSET


class ProfileRankClockAnchorsItem(Document, kw_only=True):
    ticks: Annotated[int, Meta(ge=1)]
    realtime_s: float
    uncertainty_s: Annotated[float, Meta(ge=0)]


class ProfileRankClock(Document, kw_only=True):
    source: Literal["tsc", "monotonic"]
    s_per_tick: Annotated[float, Meta(gt=0)]
    read_ns: Annotated[
        Annotated[float, Meta(gt=0)] | UnsetType,
        Meta(
            description=(
                "what one read of this clock costs, ns: the fastest of 8 batches of "
                "2048 reads at MPI_Init; every wrapper reads it twice"
            )
        ),
    ] = UNSET
    anchors: Annotated[
        Annotated[list[ProfileRankClockAnchorsItem], Meta(max_length=2)] | UnsetType,
        Meta(
            description=(
                "the profiler's clock read beside CLOCK_REALTIME at MPI_Init and when"
                " this document was written: ticks to wall-clock time (packet "
                "captures, logs)"
            )
        ),
    ] = UNSET


class ProfileRankLibraryS(Document, kw_only=True, forbid_unknown_fields=True):
    """the library's own time once per launch, s: init, in MPI_Init after PMPI_Init (the node
    layout, clock, table, call sites); finalize, in MPI_Finalize from its entry to this
    document (the last queue's processing, the mappings), in the final document only; what
    follows it (writing, gathering, reducing) is the job file's gather_s and the statistics'
    reduce_s. Absent from disabled ranks and libraries before it"""

    init: Annotated[float, Meta(ge=0)]
    finalize: Annotated[float, Meta(ge=0)] | UnsetType = UNSET


class ProfileLibraryS(Document, kw_only=True, forbid_unknown_fields=True):
    """what the launch paid once, s (profile/analysis/library_time.py): the slowest rank's time
    in MPI_Init and MPI_Finalize (the ranks' library_s), rank 0's gather of the documents
    and reduction of the statistics, and their sum; null from a library before it"""

    ranks: Annotated[int, Meta(ge=1)]
    init_s_max: Annotated[float, Meta(ge=0)]
    init_s_median: Annotated[float, Meta(ge=0)]
    finalize_s_max: Annotated[float, Meta(ge=0)] | None
    gather_s: Annotated[float, Meta(ge=0)] | None
    reduce_s: Annotated[float, Meta(ge=0)] | None
    per_launch_s: Annotated[float, Meta(ge=0)]


class LibraryTimeParts(Document, kw_only=True, forbid_unknown_fields=True):
    """each part of ProfileLibraryS, its median over launches"""

    init_s_max: Annotated[float, Meta(ge=0)] | None
    finalize_s_max: Annotated[float, Meta(ge=0)] | None
    gather_s: Annotated[float, Meta(ge=0)] | None
    reduce_s: Annotated[float, Meta(ge=0)] | None


class LibraryTimeOverLaunches(Document, kw_only=True, forbid_unknown_fields=True):
    """what several launches paid the profiler once (library_time.over_launches): the mean of
    their per_launch_s with its Student-t 95 % interval, the median, each part's median"""

    launches: Annotated[int, Meta(ge=1)]
    per_launch_s: Annotated[float, Meta(ge=0)]
    median_s: Annotated[float, Meta(ge=0)]
    ci95_low_s: float | None
    ci95_high_s: float | None
    parts_median_s: LibraryTimeParts


class ProfileRankCpu(Document, kw_only=True, forbid_unknown_fields=True):
    """computation as CPU time (docs/profiler.md, 'Computation as CPU time'): the thread's CPU
    clock read at the ENTER that ends a piece of computation at least min_piece_s long, at
    the EXIT after such a read, and at the first EXIT once min_piece_s has passed since the
    last read; absent from a disabled rank and from libraries before it"""

    clock: Literal["CLOCK_THREAD_CPUTIME_ID"]
    read_ns: Annotated[
        Annotated[float, Meta(gt=0)] | UnsetType,
        Meta(
            description=(
                "one read of that clock, ns, timed at MPI_Init; absent where it cannot be read"
            )
        ),
    ] = UNSET
    min_piece_s: Annotated[
        Annotated[float, Meta(gt=0)] | None,
        Meta(
            description=(
                "pieces at least this long are measured: 1000 reads' cost, at least "
                "1 ms (MPI_OVERLAP_CPU_MIN_US); null: reads off (MPI_OVERLAP_CPU=0,"
                " or no such clock)"
            )
        ),
    ]
    reads: Annotated[int, Meta(ge=0, description="reads of the CPU clock, every thread")]
    pieces: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "pieces of computation measured (at least min_piece_s long, monitoring on)"
            ),
        ),
    ]
    pieces_bounded: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "of those, pieces without a reading at their start: their CPU time is"
                " a lower bound (the stretch since the last reading is taken as on "
                "the CPU)"
            ),
        ),
    ]
    pieces_s: Annotated[
        float,
        Meta(
            ge=0, description="the measured pieces' wall-clock time (part of profile.totals.comp_s)"
        ),
    ]
    pieces_cpu_s: Annotated[float, Meta(ge=0, description="their CPU time")]
    off_cpu_s: Annotated[
        float,
        Meta(
            ge=0,
            description=(
                "pieces_s - pieces_cpu_s: computation spent off the CPU (descheduled,"
                " or the program's own sleeps and I/O)"
            ),
        ),
    ]
    thread_cpu_s: Annotated[
        Annotated[float, Meta(ge=0)] | None,
        Meta(
            description=(
                "the thread of MPI_Init's CPU time since MPI_Init (the scheduler's "
                "/proc/self/task/T/schedstat); null where the kernel does not give it"
            )
        ),
    ]
    run_delay_s: Annotated[
        Annotated[float, Meta(ge=0)] | None,
        Meta(
            description=(
                "that thread's time waiting on a run queue since MPI_Init: "
                "descheduled while runnable (other processes); null where the kernel "
                "does not give it"
            )
        ),
    ]


class ProfileRankTrace(Document, kw_only=True):
    """present when a timeline trace was asked for (MPI_OVERLAP_TRACE): its file next to this
    document, what was written and what was not (cap reached, or an error)"""

    file: str | None
    cap_bytes: Annotated[int, Meta(ge=0)]
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    events: Annotated[int, Meta(ge=0)]
    transfers: Annotated[int, Meta(ge=0)]
    dropped_events: Annotated[int, Meta(ge=0)]
    dropped_transfers: Annotated[int, Meta(ge=0)]
    truncated: bool
    closed: bool
    threads: Annotated[int, Meta(ge=0)]
    error: str | None


class Measures(Document, kw_only=True):
    transfers: Annotated[int, Meta(ge=0)]
    xfer_s: Annotated[float, Meta(ge=0)]
    min_s: Annotated[float, Meta(ge=0)]
    max_s: Annotated[float, Meta(ge=0)]
    nonoverlap_s: float


class ProfileTotals(Measures, kw_only=True):
    comp_s: Annotated[float, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]


class ProfileByBinItem(Measures, kw_only=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None


class ProfileByFunctionItem(Measures, kw_only=True):
    fn: str
    calls: Annotated[int, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]


class ProfileByRegionItem(Measures, kw_only=True):
    region: str
    comp_s: Annotated[float, Meta(ge=0)]
    call_s: Annotated[float, Meta(ge=0)]


class Flagged(Document, kw_only=True):
    """transfers a check flagged: their table transfer time and how far it exceeds the interval
    that should hold them, summed"""

    transfers: Annotated[int, Meta(ge=0)]
    xfer_s: Annotated[float, Meta(ge=0)]
    excess_s: Annotated[float, Meta(ge=0)]


class ChecksInCall(Document, kw_only=True):
    transfers: Annotated[int, Meta(ge=0, description="in-call transfers judged")]
    xfer_s: Annotated[float, Meta(ge=0)]
    calls: Annotated[int, Meta(ge=0, description="outermost calls that held in-call transfers")]
    call_s: Annotated[
        float,
        Meta(
            ge=0,
            description=(
                "their time (to a transfer's end event where that lies after the call's exit)"
            ),
        ),
    ]
    longest_s: Annotated[
        float, Meta(ge=0, description="sum over those calls of their longest transfer's table time")
    ]
    flagged: Flagged
    calls_beyond: Annotated[
        int, Meta(ge=0, description="calls shorter than their longest transfer")
    ]
    beyond_s: Annotated[
        float, Meta(ge=0, description="sum over those calls of longest transfer - call time")
    ]
    unchecked: Annotated[
        int,
        Meta(
            ge=0,
            description=(
                "in-call transfers with no call to judge them against (the program "
                "ended inside the call, or no memory)"
            ),
        ),
    ]


class ChecksAcrossCalls(Document, kw_only=True):
    transfers: Annotated[int, Meta(ge=0)]
    xfer_s: Annotated[float, Meta(ge=0)]
    flagged: Flagged


class FlaggedRow(Flagged, kw_only=True):
    check: Annotated[
        Literal["in-call", "across-calls"], Meta(description="the case of the transfers judged")
    ]


class ChecksByFunctionItem(FlaggedRow, kw_only=True):
    fn: str


class ChecksByBinItem(FlaggedRow, kw_only=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None


class Checks(Document, kw_only=True):
    """checks on the bounds (docs/method.md, 'Checks on the bounds'; written since the checks
    exist, absent in older profiles): transfers whose table transfer time does not fit the
    interval their events give them. in_call: in-call transfers against the outermost call
    holding them; across_calls: against XFER_BEGIN -> XFER_END (flagged = xfer_exceeds_span)"""

    in_call: ChecksInCall
    across_calls: ChecksAcrossCalls
    beyond_s: Annotated[
        float,
        Meta(
            ge=0,
            description=(
                "transfer time beyond what the wall clock allows: in_call.beyond_s + "
                "across_calls.flagged.excess_s"
            ),
        ),
    ]
    by_function: Annotated[
        list[ChecksByFunctionItem],
        Meta(
            description=(
                "one row per posting function and check that flagged a transfer, by function name"
            )
        ),
    ]
    by_bin: Annotated[
        list[ChecksByBinItem],
        Meta(description="one row per size bin and check that flagged a transfer, by size"),
    ]


class Profile(Document, kw_only=True):
    totals: ProfileTotals
    cases: Annotated[
        dict[str, Annotated[int, Meta(ge=0)]],
        Meta(extra_json_schema={"required": ["in-call", "across-calls", "begin-only", "end-only"]}),
    ]
    by_bin: list[ProfileByBinItem]
    by_function: list[ProfileByFunctionItem]
    by_region: list[ProfileByRegionItem]
    checks: Checks | UnsetType = UNSET
    counters: dict[str, Annotated[int, Meta(ge=0)]]

    def __post_init__(self) -> None:
        require_keys(self.cases, "cases", ("in-call", "across-calls", "begin-only", "end-only"))


class ProfileRank(Document, kw_only=True):
    """mpi-overlap profile of one rank (profile.rank-N.json), version 1: Written by
    libmpi_overlap (native/profiler/mop_output.c) at MPI_Finalize, at exit without it, on a
    fatal signal, and periodically while running."""

    schema: Literal["mpi-overlap/profile-rank"]
    schema_version: Literal[1]
    tool_version: str
    status: Annotated[
        Literal["complete", "incomplete", "running", "disabled"],
        Meta(
            description=(
                "complete: written at MPI_Finalize; incomplete: exit without "
                "MPI_Finalize or a fatal signal; running: a periodic snapshot (the "
                "program was killed before it could write more); disabled: profiling "
                "was refused (see reason)"
            )
        ),
    ]
    reason: str | None
    rank: Annotated[int, Meta(ge=0)]
    size: Annotated[int, Meta(ge=1)]
    nodes: Annotated[int, Meta(ge=1)]
    host: str
    pid: int
    threads: Annotated[int, Meta(ge=0)]
    mpi_library_version: str
    table: ProfileRankTable
    clock: ProfileRankClock
    wall_s: float | None
    library_s: Annotated[
        ProfileRankLibraryS | UnsetType,
        Meta(
            description=(
                "the library's own time once per launch, s: init, in MPI_Init after "
                "PMPI_Init (the node layout, clock, table, call sites); finalize, in "
                "MPI_Finalize from its entry to this document (the last queue's "
                "processing, the mappings), in the final document only; what follows "
                "it (writing, gathering, reducing) is the job file's gather_s and the"
                " statistics' reduce_s. Absent from disabled ranks and libraries "
                "before it"
            )
        ),
    ] = UNSET
    cpu: Annotated[
        ProfileRankCpu | UnsetType,
        Meta(
            description=(
                "computation as CPU time (docs/profiler.md, 'Computation as CPU "
                "time'): the thread's CPU clock read at the ENTER that ends a piece "
                "of computation at least min_piece_s long, at the EXIT after such a "
                "read, and at the first EXIT once min_piece_s has passed since the "
                "last read; absent from a disabled rank and from libraries before it"
            )
        ),
    ] = UNSET
    queue_events: Annotated[int, Meta(ge=1)]
    processing: Annotated[
        Literal["off"] | UnsetType,
        Meta(
            description=(
                "off: the events were counted, not processed (MPI_OVERLAP_PROCESS=0, bench"
                " profiler-overhead's measure of the wrappers and the queue alone); the "
                "profile then holds no transfer, call or computation. Absent otherwise"
            )
        ),
    ] = UNSET
    trace: Annotated[
        ProfileRankTrace | UnsetType,
        Meta(
            description=(
                "present when a timeline trace was asked for (MPI_OVERLAP_TRACE): its"
                " file next to this document, what was written and what was not (cap "
                "reached, or an error)"
            )
        ),
    ] = UNSET
    profile: Profile


class ProfileStatsMeasures(Document, kw_only=True):
    transfers: Annotated[int, Meta(ge=0)]
    xfer_s: float
    min_s: float
    max_s: float
    nonoverlap_s: Annotated[
        float, Meta(description="the sum over ranks of max(0, xfer_s − max_s) of each rank's cell")
    ]


class ProfileStatsTotals(ProfileStatsMeasures, kw_only=True):
    comp_s: float
    call_s: float


class Cell(ProfileStatsMeasures, kw_only=True):
    ranks: Annotated[int, Meta(ge=1, description="ranks that have this entry")]
    worst_rank: Annotated[
        int | None,
        Meta(
            description=(
                "the rank that lost most non-overlapped time here (lowest on ties); "
                "null when none lost any"
            )
        ),
    ]
    worst_s: float


class ProfileStatsByBinItem(Cell, kw_only=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None


class ProfileStatsByFunctionItem(Cell, kw_only=True):
    fn: str
    calls: Annotated[int, Meta(ge=0)]
    call_s: float


class ProfileStatsByRegionItem(Cell, kw_only=True):
    region: str
    comp_s: float
    call_s: float


Column = list[float | None]


class ProfileStatsRankRows(Document, kw_only=True):
    """one entry per rank in every column, rank order"""

    rank: list[Annotated[int, Meta(ge=0)]]
    disabled: list[bool]
    transfers: list[Annotated[int, Meta(ge=0)]]
    xfer_s: Column
    min_s: Column
    max_s: Column
    nonoverlap_s: Column
    comp_s: Column
    call_s: Column
    wall_s: Column
    comp_off_cpu_s: Annotated[
        Column | UnsetType,
        Meta(
            description=(
                "the rank document's cpu.off_cpu_s (null: not measured, or a disabled rank)"
            )
        ),
    ] = UNSET
    run_delay_s: Annotated[
        Column | UnsetType,
        Meta(
            description=(
                "the rank document's cpu.run_delay_s (null: not available, or a disabled rank)"
            )
        ),
    ] = UNSET
    in_call_xfer_s: Column
    in_call_call_s: Column
    in_call_longest_s: Column
    flagged_xfer_s: Column
    beyond_s: Column
    in_call_calls: list[Annotated[int, Meta(ge=0)]]
    in_call_calls_beyond: list[Annotated[int, Meta(ge=0)]]
    flagged_transfers: list[Annotated[int, Meta(ge=0)]]
    host: list[str]
    top_fn: Annotated[
        list[str],
        Meta(description="the function with the most call time ('' none; ties: the last name)"),
    ]
    top_fn_call_s: Column
    busiest_site: Annotated[
        list[str | None],
        Meta(
            description=(
                "FNV-1a 64 (16 hex digits) of the name of the rank's known call site "
                "with the most call time, '<site>\\t<fn>' of the sites table; null: "
                "none"
            )
        ),
    ]
    busiest_site_call_s: Column


class Who(Document, kw_only=True):
    """ranks: how many, and the lowest 16 of them"""

    n: Annotated[int, Meta(ge=0)]
    first: Annotated[list[Annotated[int, Meta(ge=0)]], Meta(max_length=16)]


class ProfileStatsFlagged(Document, kw_only=True):
    check: Literal["in-call", "across-calls"]
    transfers: Annotated[int, Meta(ge=1)]
    xfer_s: float
    excess_s: float
    ranks: Who


class ProfileStatsChecksByFunctionItem(ProfileStatsFlagged, kw_only=True):
    fn: str


class ProfileStatsChecksByBinItem(ProfileStatsFlagged, kw_only=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None


class ProfileStatsChecks(Document, kw_only=True):
    """the checks on the bounds (native/profiler/mop_checks.h) summed over ranks, and what they
    flagged by posting function and size bin"""

    in_call: dict[str, Any]
    across_calls: dict[str, Any]
    beyond_s: float
    by_function: list[ProfileStatsChecksByFunctionItem]
    by_bin: list[ProfileStatsChecksByBinItem]


class ProfileStatsSitesItem(Document, kw_only=True):
    site: Annotated[
        str,
        Meta(
            description=(
                "where: '<path>+0x<file offset>' of the mapping that holds the "
                "address ('0x<address>' where none does), a chain's frames joined by "
                "' < '; '' for the unknown site"
            )
        ),
    ]
    fn: str
    calls: Annotated[int, Meta(ge=0)]
    call_s: float
    ranks: Annotated[int, Meta(ge=1)]


class SiteCell(Cell, kw_only=True):
    site: Annotated[
        str,
        Meta(
            description=(
                "where: '<path>+0x<file offset>' of the mapping that holds the "
                "address ('0x<address>' where none does), a chain's frames joined by "
                "' < '; '' for the unknown site"
            )
        ),
    ]
    fn: str


class ProfileStatsPairsItem(Cell, kw_only=True):
    post: Annotated[
        str,
        Meta(
            description=(
                "where: '<path>+0x<file offset>' of the mapping that holds the "
                "address ('0x<address>' where none does), a chain's frames joined by "
                "' < '; '' for the unknown site"
            )
        ),
    ]
    post_fn: str
    end: Annotated[
        str,
        Meta(
            description=(
                "where: '<path>+0x<file offset>' of the mapping that holds the "
                "address ('0x<address>' where none does), a chain's frames joined by "
                "' < '; '' for the unknown site"
            )
        ),
    ]
    end_fn: str
    polled: Annotated[int, Meta(ge=0)]


class ProfileStatsRankBinsItem(Document, kw_only=True):
    lo: Annotated[int, Meta(ge=0)]
    hi: int | None
    transfers: list[Annotated[int, Meta(ge=0)]]
    xfer_s: Column
    min_s: Column
    max_s: Column


class ProfileStats(Document, kw_only=True):
    """mpi-overlap job statistics (profile.stats.json), version 1: Every rank's measures
    reduced inside the job at MPI_Finalize by a binomial tree to rank 0
    (native/profiler/mop_reduce.h): sums in the tree's fixed order, the ranks that have each
    entry and the worst of them, and one row of totals per rank as columns. The analysis
    repeats the order over the rank documents and gets the same numbers
    (profile/documents/job_stats.py)."""

    schema: Literal["mpi-overlap/profile-stats"]
    schema_version: Literal[1]
    ranks: Annotated[int, Meta(ge=1)]
    ranks_with_data: Annotated[int, Meta(ge=0, description="ranks not disabled")]
    order: str
    reduce_s: Annotated[
        float | None,
        Meta(
            description=("the reduction's wall time on rank 0, after the program's last MPI call")
        ),
    ]
    largest_message: Annotated[
        int, Meta(ge=0, description="bytes of the largest subtree rank 0 received")
    ]
    totals: ProfileStatsTotals
    cases: dict[str, Annotated[int, Meta(ge=0)]]
    counters: dict[str, Annotated[int, Meta(ge=0)]]
    by_bin: list[ProfileStatsByBinItem]
    by_function: list[ProfileStatsByFunctionItem]
    by_region: list[ProfileStatsByRegionItem]
    rank_rows: Annotated[
        ProfileStatsRankRows, Meta(description="one entry per rank in every column, rank order")
    ]
    cases_ranks: Annotated[
        dict[str, Who], Meta(description="per case, the ranks where it is not zero")
    ]
    counters_ranks: Annotated[
        dict[str, Who], Meta(description="per counter, the ranks where it is not zero")
    ]
    checks: Annotated[
        ProfileStatsChecks,
        Meta(
            description=(
                "the checks on the bounds (native/profiler/mop_checks.h) summed over "
                "ranks, and what they flagged by posting function and size bin"
            )
        ),
    ]
    sites: Annotated[
        list[ProfileStatsSitesItem],
        Meta(description="calls and call time per call site (native/profiler/mop_job_stats.h)"),
    ]
    post_sites: Annotated[
        list[SiteCell], Meta(description="the site pairs summed per posting site")
    ]
    end_sites: Annotated[
        list[SiteCell], Meta(description="the site pairs summed per completing site")
    ]
    pairs: Annotated[
        list[ProfileStatsPairsItem],
        Meta(description="transfers per (posting site, completing site)"),
    ]
    site_labels: Annotated[
        dict[str, str] | UnsetType,
        Meta(
            description=(
                "added by collect (result.json's job_stats): each place's source-line"
                " label (profile/documents/callsites.py)"
            )
        ),
    ] = UNSET
    mpi_library_version: Annotated[str | None, Meta(description="rank 0's MPI_Get_library_version")]
    disabled_reason: Annotated[
        str | None, Meta(description="why the lowest disabled rank is disabled; null: none is")
    ]
    rank_bins: Annotated[
        list[ProfileStatsRankBinsItem],
        Meta(
            description=(
                "per size bin with transfers, one column per measure over the ranks "
                "(0 where a rank had none of that size)"
            )
        ),
    ]


class ProfileRunApp(Document, kw_only=True):
    argv: list[str]
    cwd: str


class ProfileRunTable(Document, kw_only=True):
    path: str
    forced: bool
    hash: Annotated[
        str | UnsetType | None,
        Meta(description="FNV-1a 64 of the table file when the run started (16 hex digits)"),
    ] = UNSET
    created: Annotated[
        str | UnsetType | None, Meta(description="the table's 'created' time stamp (UTC)")
    ] = UNSET
    verdict: Literal["ok", "noisy", "suspect", "unverified"] | UnsetType = UNSET
    verdict_reason: str | UnsetType = UNSET
    toolchain_modified: Annotated[
        str | UnsetType | None,
        Meta(
            description=(
                "when the toolchain's MPI (compiler wrapper or launcher) was last "
                "installed or changed (UTC); a table created before it may be stale"
            )
        ),
    ] = UNSET


class ProfileRunJobFile(Document, kw_only=True):
    """the last line of profile.job.jsonl: rank 0's record of the gather at MPI_Finalize
    (native/profiler/mop_gather.h); null when there is no such file or it was cut"""

    ranks: Annotated[int, Meta(ge=1)] | UnsetType = UNSET
    in_file: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    own_files: list[Annotated[int, Meta(ge=0)]] | UnsetType = UNSET
    rank_files_kept: bool | UnsetType = UNSET
    bytes_: Annotated[int, Meta(ge=0)] | UnsetType = field(name="bytes", default=UNSET)
    largest_line: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    gather_s: float | UnsetType | None = UNSET


class ProfileRun(Document, kw_only=True):
    """mpi-overlap profile run (result.json of `mpi-overlap profile`), version 1: Every rank's
    profile document as the profiler wrote it, plus what the launch knew: the application,
    the table, the bins, and the ranks that wrote nothing."""

    schema: Literal["mpi-overlap/profile-run"]
    schema_version: Literal[1]
    benchmark: str
    status: Annotated[
        Literal["complete", "incomplete"],
        Meta(
            description=("complete when every rank wrote a complete profile; incomplete otherwise")
        ),
    ]
    app: ProfileRunApp
    ranks_expected: Annotated[int, Meta(ge=1)]
    table: ProfileRunTable
    bins: list[Annotated[int, Meta(ge=1)]] | None
    ranks: list[ProfileRank]
    missing_ranks: list[Annotated[int, Meta(ge=0)]]
    job_stats: Annotated[
        ProfileStats | UnsetType | None,
        Meta(
            description=(
                "profile.stats.json: the job's statistics rank 0 reduced at "
                "MPI_Finalize (native/profiler/mop_reduce.h); null when there is none"
                " (a job that did not end in MPI_Finalize, MPMD with ranks disabled) "
                "or it could not be read"
            )
        ),
    ] = UNSET
    job_file: Annotated[
        ProfileRunJobFile | UnsetType | None,
        Meta(
            description=(
                "the last line of profile.job.jsonl: rank 0's record of the gather at"
                " MPI_Finalize (native/profiler/mop_gather.h); null when there is no "
                "such file or it was cut"
            )
        ),
    ] = UNSET
    warnings: list[str]


MODELS: dict[str, Any] = {
    "profile-rank-v1": ProfileRank,
    "profile-stats-v1": ProfileStats,
    "profile-run-v1": ProfileRun,
}
register(MODELS)

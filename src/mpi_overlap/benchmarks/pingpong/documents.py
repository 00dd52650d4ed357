"""The pingpong package's documents as typed models (core/schema.py): bench-pingpong-v1.
Their JSON schemas are generated from these classes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType, field

from ...core.schema import Document, register
from ..table_keys import TableKeys


class Part(Document, kw_only=True, forbid_unknown_fields=True):
    samples_s: Annotated[
        list[Annotated[float, Meta(ge=0)]],
        Meta(
            description=("seconds per message of every sample (a timed block), in the order taken")
        ),
    ]
    cpu_share: Annotated[
        list[Annotated[float, Meta(ge=0)]],
        Meta(
            description=(
                "per sample: the CPU share over it, as for the one-way samples but "
                "rank 0's alone for o_s and o_r (its own calls) and the pair's for g"
            )
        ),
    ]
    sender_s: Annotated[
        list[Annotated[float, Meta(ge=0)]] | UnsetType,
        Meta(
            description=(
                "o_r only, per sample: the sending peer's MPI_Send per message while "
                "rank 0 waited delay_s before receiving; far below delay_s when the "
                "send is eager (it returns without the receiver), above it when it "
                "waits for the receive (rendezvous). Absent in results of older "
                "versions"
            )
        ),
    ] = UNSET
    delay_s: Annotated[
        list[Annotated[float, Meta(ge=0)]] | UnsetType,
        Meta(
            description=(
                "o_r only, per sample: how long rank 0 waited after asking for the "
                "message before receiving it"
            )
        ),
    ] = UNSET


class SizeParts(Document, kw_only=True, forbid_unknown_fields=True):
    """with --parts-max, for the sizes up to it: the transfer model's parts (mo_pingpong's file
    comment; src/mpi_overlap/calibration/xfer_parts.py): o_s the time of a blocking MPI_Send
    whose receiver waits in MPI_Recv, o_r the time of a blocking MPI_Recv of a message
    MPI_Iprobe has seen, g the time per message of back-to-back MPI_Sends"""

    o_s: Part
    o_r: Part
    g: Part


class Size(Document, kw_only=True, forbid_unknown_fields=True):
    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    one_way_s: Annotated[
        float | None,
        Meta(
            description=(
                "median of all samples (the plain latency figure; the table uses the "
                "undisturbed samples)"
            )
        ),
    ]
    samples: Annotated[int, Meta(ge=0)]
    iterations: Annotated[
        int,
        Meta(
            ge=1,
            description=(
                "round trips per sample (the last visit's: they follow the fastest "
                "undisturbed block)"
            ),
        ),
    ]
    min_s: float | None
    mean_s: float | None
    max_s: float | None
    ci_lo_s: Annotated[
        float | None, Meta(description="95 % confidence interval of the mean (Student t)")
    ]
    ci_hi_s: float | None
    samples_s: Annotated[
        list[float], Meta(description="one-way seconds of every sample, in the order taken")
    ]
    cpu_share: Annotated[
        list[Annotated[float, Meta(ge=0)]] | UnsetType,
        Meta(
            description=(
                "per sample (same order): the smaller of the two ranks' thread CPU "
                "time / wall time over it; about 1 when both kept their cores, lower "
                "when either was descheduled. Absent in results of older versions"
            )
        ),
    ] = UNSET
    visit_ends: Annotated[
        list[Annotated[int, Meta(ge=1)]] | UnsetType,
        Meta(
            description=(
                "where each visit of the size (one per pass) ends in samples_s: "
                "cumulative sample counts, ascending, the last equal to the number of"
                " samples. The table's intervals use the visits (docs/method.md, "
                "'Transfer-time table'). Absent in results of older versions"
            )
        ),
    ] = UNSET
    parts: Annotated[
        SizeParts | UnsetType,
        Meta(
            description=(
                "with --parts-max, for the sizes up to it: the transfer model's parts"
                " (mo_pingpong's file comment; "
                "src/mpi_overlap/calibration/xfer_parts.py): o_s the time of a "
                "blocking MPI_Send whose receiver waits in MPI_Recv, o_r the time of "
                "a blocking MPI_Recv of a message MPI_Iprobe has seen, g the time per"
                " message of back-to-back MPI_Sends"
            )
        ),
    ] = UNSET


class Stream(Document, kw_only=True, forbid_unknown_fields=True):
    """with --stream, per pair: windows of messages sent back to back (mo_pingpong's file
    comment; src/mpi_overlap/calibration/xfer_stream.py)"""

    bytes_: Annotated[int, Meta(ge=0)] = field(name="bytes")
    window: Annotated[int, Meta(ge=4, description="messages per window (sample)")]
    samples_s: Annotated[
        list[Annotated[float, Meta(ge=0)]],
        Meta(
            description=(
                "per window: seconds per message over its second half, from the "
                "receiver's completions (the link's pace once a burst is used up)"
            )
        ),
    ]
    cpu_share: Annotated[
        list[Annotated[float, Meta(ge=0)]],
        Meta(description="per window: the smaller of the two ranks' CPU shares over it"),
    ]


class Pair(Document, kw_only=True, forbid_unknown_fields=True):
    class_: Literal["intra", "inter"] = field(name="class")
    ranks: Annotated[list[Annotated[int, Meta(ge=0)]], Meta(min_length=2, max_length=2)]
    hosts: Annotated[list[str], Meta(min_length=2, max_length=2)]
    complete: Annotated[
        bool, Meta(description="false when the time limit stopped the sweep before the last size")
    ]
    sizes: list[Size]
    stream: Stream | UnsetType = UNSET


class BenchPingpong(TableKeys, kw_only=True, forbid_unknown_fields=True):
    """'results' of the pingpong benchmark (one-way transfer time per message size, blocking
    ping-pong): Pairs: rank 0 with the lowest other rank on its node (intra) and, when the
    job spans several nodes, with the lowest rank on another node (inter). A sample is one
    timed block of round trips (MPI_Send/MPI_Recv, MPI_BYTE) divided by 2 * its round trips;
    one_way_s is the median of all samples (the transfer-time table uses the undisturbed
    ones instead, see cpu_share). Sizes are visited in a shuffled order per pass; a size not
    visited yet (a run cut short) is absent. The fingerprints identify the machine of rank 0
    and the MPI library, as in the transfer-time table."""

    pairs: list[Pair]
    ranks: Annotated[int, Meta(ge=2)]
    nodes: Annotated[
        int, Meta(ge=1, description="shared-memory nodes the job spans (MPI_COMM_TYPE_SHARED)")
    ]


MODELS: dict[str, Any] = {
    "bench-pingpong-v1": BenchPingpong,
}
register(MODELS)

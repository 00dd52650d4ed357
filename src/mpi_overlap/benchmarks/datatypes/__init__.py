"""The datatypes and alignment benchmarks (Balaji et al.): derived datatypes (stride-2
vectors, indexed, struct, MPI_Pack, loop packing) against contiguous sends of the same
bytes, and buffer alignment (strided ints at byte offsets 0-7, contiguous buffers at
cache-line and page offsets). One program, native/bench/datatypes.c, built twice
(mo_alignment with MO_ALIGNMENT); here their flags, and beside this file their analysis
(analysis.py), report (report.py) and documents (documents.py)."""

from ..spec import Benchmark, Flag, declare, size_sweep

_FLAGS = (
    Flag("--sizes", "payload sizes, e.g. 64,1k,64k,1M", kind="sizes", metavar="LIST"),
    Flag("--reps", "samples per case and size"),
    Flag("--iters", "fixed round trips per sample (default: automatic)"),
)
_COMMON = dict(flags=_FLAGS, quick_at=1, quick_help="fewer sizes and samples",
               verbose_help="print the program's output", args=size_sweep("64,1k,64k,1M"))

SPECS = (
    declare(
        Benchmark(
            name="datatypes",
            program="mo_datatypes",
            title="Derived datatypes (stride-2 vectors, indexed, struct, packing) vs contiguous",
            min_ranks=2,
            analyze=None,
            default_timeout_s=900.0,
            quick_timeout_s=300.0,
            suite="overhead",
            suite_order=50,
        ),
        __name__,
        help="Derived datatypes (stride-2 vectors, indexed, struct, MPI_Pack, loop packing) "
             "against contiguous sends of the same bytes.",
        **_COMMON,
    ),
    declare(
        Benchmark(
            name="alignment",
            program="mo_alignment",
            title="Buffer alignment: strided int vectors at offsets 0-7, contiguous at 64 B/4 KiB",
            min_ranks=2,
            analyze=None,
            default_timeout_s=900.0,
            quick_timeout_s=300.0,
            suite="overhead",
            suite_order=60,
        ),
        __name__,
        help="Buffer alignment: strided int vectors at byte offsets 0-7, contiguous buffers "
             "at cache-line and page offsets.",
        source="datatypes.c",
        **_COMMON,
    ),
)

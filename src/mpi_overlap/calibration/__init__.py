"""The transfer-time table the profiler bounds overlap with: `calibrate` measures it with
the benchmarks of role P2P_TABLE and COLLECTIVE_TABLE (calibrate.py, and
calibrate_check.py for `--check`; table_benchmarks.py: what it needs of them, handed in
from the benchmarks above), xfer_table.py holds its format, reader and writer,
xfer_quality.py the per-size estimates and the verdict, table_trust.py whether a table
may be used, table_note.py what a run records of the table it used, coll_failures.py and
coll_size_model.py the collectives' failed calibrations and their model over sizes."""

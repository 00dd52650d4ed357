"""Timeline traces of profiled runs (`mpi-overlap profile --trace`): reading the per-rank
binary files libmpi_overlap writes (reader.py), timelines and both ends of each message
matched (timeline.py, match.py, matched_run.py: read once for the two-sided analysis,
predict and the OTF2 export), Perfetto (perfetto.py, convert.py) and OTF2
(otf2_records.py, otf2_export.py)."""

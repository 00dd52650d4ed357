"""Timeline traces of profiled runs (`mpi-overlap profile --trace`): reading the per-rank
binary files libmpi_overlap writes and converting them to a Perfetto timeline."""

"""Running applications under the overlap profiler (libmpi_overlap) and collecting what
each rank wrote into one run directory."""

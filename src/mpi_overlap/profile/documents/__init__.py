"""What libmpi_overlap writes and how it is read back: the rank documents
(rank_documents.py), merging them into result.json (collect.py; its line layout is
result_file.py beside rundir.py, which reads it), the job's reduced statistics
(job_stats.py, stats_file.py) and call sites (job_sites.py), addresses mapped to source
lines (callsites.py), pandas frames of them (profile_frames.py)."""

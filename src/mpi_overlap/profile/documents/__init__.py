"""What libmpi_overlap writes and how it is read back: the rank documents
(rank_documents.py), merging them into result.json (collect.py; result_file.py: one per
line), the job's reduced statistics (job_stats.py, stats_file.py) and call sites
(job_sites.py), addresses mapped to source lines (callsites.py), pandas frames of them
(profile_frames.py)."""

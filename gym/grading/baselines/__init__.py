"""Reference baselines: measured per timed shape, cached on disk, warmed ahead of a long job."""

"""A grade's plan: its random streams, trials, calls and a fusion task's anchors."""

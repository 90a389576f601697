"""Timing a passing candidate: the timing policy, further rounds, statistics, speed of light."""

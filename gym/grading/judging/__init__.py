"""Judging what a job wrote: records, integrity rules, the replay check and the verdict."""

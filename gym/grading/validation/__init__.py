"""`kgym check-tasks`: whether a task is fit to grade."""

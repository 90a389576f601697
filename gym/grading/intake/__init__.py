"""What a submission is, before anything runs: the static audit and the kernels file."""

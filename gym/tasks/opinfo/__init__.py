"""PyTorch OpInfo ops as tasks (`kgym import opinfo`)."""

"""Packaging tests: the built wheel works installed outside the checkout."""

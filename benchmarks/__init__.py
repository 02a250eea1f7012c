"""Benchmarks against peer libraries; ``make bench`` runs them all. Not tests: nothing asserts."""

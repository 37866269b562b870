"""Benchmarks of duals against its peers: ``python -m benchmarks.run`` (see README.md)."""

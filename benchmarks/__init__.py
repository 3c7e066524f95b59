"""dynorm's benchmark suite: ``python -m benchmarks`` (or ``make bench``) prints one table.

Every client reads the same pre-encoded response from a loopback server running in a separate
process, so the numbers are the client's own CPU time (``time.process_time``) and machine noise
cancels in the ratios. See ``python -m benchmarks --help``.
"""

"""Settings for the whole suite."""

from __future__ import annotations

from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default: a measure of the machine, not
# of the code, and `make test` runs three suites at once on two cores. Property tests here
# assert behaviour; speed is measured in benchmarks/.
settings.register_profile("dynorm", deadline=None)
settings.load_profile("dynorm")

# Developer and CI entry points. `make test` is what CI runs (.ci/run).

PYTHON ?= python3
NPM ?= npm

MAKEFLAGS += --no-print-directory

VENV := .venv
BIN := $(VENV)/bin
# Stamp files: the venv is rebuilt when pyproject.toml changes, dynalite is installed once.
VENV_STAMP := $(VENV)/.stamp
# The package and the embedded server only: what `make demo` needs.
DEMO_STAMP := $(VENV)/.demo-stamp
# The bench extra (peer clients) on top of dev; only `make bench` installs it.
BENCH_STAMP := $(VENV)/.bench-stamp
DYNALITE_DIR := .dynalite
DYNALITE_STAMP := $(DYNALITE_DIR)/.stamp


.DEFAULT_GOAL := test
.PHONY: .venv dynalite lint format typecheck test test-moto test-slow-path test-dynalite release-check demo bench clean

.venv: $(VENV_STAMP)

# constraints.txt keeps pip's resolver from walking back through releases (see the file).
PIP_INSTALL := $(BIN)/pip install --disable-pip-version-check -c constraints.txt

$(VENV_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -e '.[dev]'
	touch $@

$(DEMO_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -e '.[testing]'
	touch $@

dynalite: $(DYNALITE_STAMP)

$(DYNALITE_STAMP):
	$(NPM) install --no-audit --no-fund --prefix $(DYNALITE_DIR) dynalite@4
	touch $@

lint: .venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Rewrites files: fixes what ruff can and applies the formatter.
format: .venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# mypy strict over the package and tests (with the dynorm.mypy plugin), then pyright (standard)
# over the package and tests/typing, which shows what users see and what must be rejected. The
# pyright package fetches its node runtime on first use.
typecheck: .venv
	$(BIN)/mypy
	$(BIN)/pyright --pythonpath $(BIN)/python

# Lint and types first (fast, and a type error explains many test failures), then four runs
# at once: three with their own server -- the whole suite on the embedded moto server (fast
# request path), the integration tests again on moto through botocore's request path, and on
# dynalite -- and the release check (the sdist and wheel built, the wheel installed alone in a
# clean venv and run). Much of a run is waiting on its server, on pip or on the `dynorm` command
# in subprocesses, so the four together take about as long as the longest; each run's output is
# printed whole when it ends (--output-sync), and any failure fails `make test`. A failed run
# ends its output with a line naming it (after pytest's short test summary, -ra, which names
# each failed test), and `make test` ends with the list of the runs that failed (.ci/suite runs
# each).
#
# Tests marked `offline` never reach a server (`dynorm --help`, arguments refused before
# connecting): the moto run has them, the other two leave them out.
SUITES := test-moto test-slow-path test-dynalite release-check

test: .venv dynalite
	$(MAKE) lint
	$(MAKE) typecheck
	@failed=$$(mktemp); \
	FAILED_SUITES=$$failed $(MAKE) -j$(words $(SUITES)) -k --output-sync=target $(SUITES); \
	status=$$?; \
	if [ -s $$failed ]; then echo "make test: FAILED: $$(tr '\n' ' ' < $$failed)"; \
	elif [ $$status -ne 0 ]; then echo "make test: FAILED (see the errors above)"; fi; \
	rm -f $$failed; \
	exit $$status

test-moto: .venv
	.ci/suite test-moto "the whole suite on moto" $(BIN)/pytest

# The integration tests again with botocore building, signing and parsing every request
# (connect(fast_path=False)): both request paths must give the same results. No cache: it may run
# beside test-moto, which keeps pytest's cache.
test-slow-path: .venv
	DYNORM_TEST_FAST_PATH=0 .ci/suite test-slow-path "the integration tests, botocore's path" \
		$(BIN)/pytest -m "integration and not offline" -p no:cacheprovider

test-dynalite: .venv dynalite
	DYNORM_TEST_BACKEND=dynalite .ci/suite test-dynalite "the integration tests on dynalite" \
		$(BIN)/pytest -m "integration and not offline" -p no:cacheprovider

# What a user gets: builds the sdist and the wheel from it (the dev extra's `build`, with the
# build backend of pyproject.toml), checks they carry py.typed and the licence, installs the
# wheel alone into a new venv in a temporary directory (pip's index settings as for .venv, no
# dev extra, no PYTHONPATH) and runs a smoke test, `dynorm --help` and `dynorm design` from
# there (tests/release/check.py). About a minute, most of it pip.
release-check: .venv
	.ci/suite release-check "the wheel built, installed in a clean venv and run" \
		$(BIN)/python -m tests.release.check

# Installs only the package and moto's server (not the dev toolchain), then tours every seed
# access pattern on the embedded server (or on DYNORM_ENDPOINT_URL when set).
demo: $(DEMO_STAMP)
	$(BIN)/python examples/tour.py

$(BENCH_STAMP): $(VENV_STAMP)
	$(PIP_INSTALL) -e '.[dev,bench]'
	touch $@

# Every client on the same work in one process; prints one table (not part of `make test`).
bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) $(DYNALITE_DIR) .mypy_cache .ruff_cache .pytest_cache .hypothesis \
		.coverage .coverage.* htmlcov dist build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

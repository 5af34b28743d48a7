# Every target bootstraps .venv on its own, so `make demo` and `make test` work on a fresh
# machine with only Python >= 3.11 and pip. The stamp is rebuilt when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint docs bench soak clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "actorscope needs Python >= 3.11; set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,dev,docs,bench]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/actorscope demo
	@echo "Console on the demo database: $(BIN)/actorscope keys add --db actorscope-demo.db --tenant default --user you --role operator"
	@echo "  then $(BIN)/actorscope serve examples/console.toml and open http://127.0.0.1:8080/console with that key"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site-check

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	@echo "The site is in site/ (open site/index.html), or: $(BIN)/mkdocs serve"

test: lint
	$(BIN)/python -m coverage run -m pytest
	@echo "coverage, total % (fails under the floor in pyproject.toml):"
	@$(BIN)/python -m coverage report --format=total

bench: $(STAMP)
	$(BIN)/python -m bench

# Several workers on one PostgreSQL under a stream and faults; one table of what held. Loopback
# only, needs PostgreSQL's binaries (apt install postgresql). make soak ARGS="--duration 1h".
soak: $(STAMP)
	$(BIN)/python -m soak $(ARGS)

clean:
	rm -rf $(VENV) site .mypy_cache .ruff_cache .pytest_cache .hypothesis .coverage

# Two commands do all set-up, as an unprivileged user, on Linux with Python 3.11-3.13:
#   make run   - install, build the embedded offline resources, run the whole workflow
#   make test  - install, then the whole test suite (unit, workflow and lint)
# Another Python: `make setup PYTHON=python3.12` (a name on PATH or a path).
SHELL := /bin/bash
PYTHON ?= python3.11
# The exact versions installed (pyproject.toml has the ranges; see constraints.txt).
CONSTRAINTS := constraints.txt
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.xlalign-installed
CORES ?= 2
CONFIG ?= config/config.yaml
# The arguments of every Snakemake call of `make run`, the report's included.
SNAKEMAKE_ARGS = --profile profiles/laptop --cores $(CORES) --configfile $(CONFIG)
# The configuration's `name` (results/<name>/), from the last of $(CONFIG) that sets it;
# read with the venv's Python, so only in recipes that run after `setup`.
NAME = $(shell $(BIN)/python -c 'import sys, yaml; names = [(yaml.safe_load(open(f)) or {}).get("name") for f in sys.argv[1:]]; print([n for n in names if n][-1])' $(CONFIG))
RESULTS = $(CURDIR)/results/$(NAME)

.PHONY: run test test-fast setup lint system-packages clean-results

setup: $(STAMP)

# Nothing of the set-up needs root: every Python package comes from a wheel (PyICU with its
# own ICU, pyicu-wheels) or builds without system libraries. The one system package left is
# headless Chromium, for the tests that open the Snakemake report in a browser
# (tests/e2e/test_report.py, tests/reporting/test_browser.py); `make run` does not use it.
# When it is missing it is installed (Debian's `chromium`) only if the user may (root or
# password-less sudo, and apt-get); otherwise one line says what is missing and for what,
# and the set-up goes on (those tests are then skipped, with that reason).
system-packages:
	@chromium=$${XLALIGN_CHROMIUM:-}; \
	for c in chromium chromium-browser google-chrome; do \
	  [ -n "$$chromium" ] || chromium=$$(command -v $$c 2>/dev/null); done; \
	[ -n "$$chromium" ] && exit 0; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else sudo=no; fi; \
	if [ "$$sudo" != no ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium (headless Chromium, for the report's browser tests)"; \
	  { $$sudo apt-get update -qq && \
	    $$sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
	  echo "missing: headless Chromium (apt-get install chromium failed): the report's browser tests need it and are skipped"; \
	else \
	  echo "missing: headless Chromium (chromium, chromium-browser or google-chrome on PATH, or XLALIGN_CHROMIUM): only the report's browser tests need it and are skipped; make run does not"; \
	fi

$(STAMP): pyproject.toml $(CONSTRAINTS)
	@if [ -x $(BIN)/python ]; then \
	  if [ "$(origin PYTHON)" != file ] && [ "$$($(BIN)/python -c 'import sys; print(sys.version_info[:2])')" != "$$($(PYTHON) -c 'import sys; print(sys.version_info[:2])' 2>/dev/null)" ]; then \
	    echo "setup: $(VENV) was made with another Python than PYTHON=$(PYTHON); remove it (rm -rf $(VENV)) to change"; exit 1; fi; \
	else \
	  command -v $(PYTHON) >/dev/null 2>&1 || { echo "setup: $(PYTHON) not found; name a Python 3.11, 3.12 or 3.13: make setup PYTHON=python3.12"; exit 1; }; \
	  $(PYTHON) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' || { echo "setup: $(PYTHON) is Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'); xlalign needs 3.11, 3.12 or 3.13 (make setup PYTHON=...)"; exit 1; }; \
	  echo "$(PYTHON) -m venv $(VENV)"; $(PYTHON) -m venv $(VENV); \
	fi
	$(BIN)/pip install -q --upgrade pip
	# Exact versions from $(CONSTRAINTS) (torch==2.13.0, so pip takes the CPU wheel where one
	# is offered; never an unpinned torch); pip's own configured constraints still apply.
	$(BIN)/pip install -q -c $(CONSTRAINTS) -e ".[dev]"
	touch $(STAMP)

# The workflow, then its Snakemake report: one self-contained HTML file (the results are
# embedded; see workflow/report/README.md), written only once every job has finished.
run: setup
	$(BIN)/snakemake all $(SNAKEMAKE_ARGS)
	$(BIN)/snakemake all $(SNAKEMAKE_ARGS) --report $(RESULTS)/report.html
	@echo
	@echo "results:      $(RESULTS)/"
	@echo "tables:       $(RESULTS)/tables/tables.md"
	@echo "zero-shot:    $(RESULTS)/tables/zeroshot.md"
	@echo "MLflow store: $(CURDIR)/results/mlflow.db"
	@echo "  browse it:  $(BIN)/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/results/mlflow.db"
	@echo "report:       $(RESULTS)/report.html"

test: setup system-packages
	$(BIN)/pytest

# Everything but the end-to-end workflow runs (tests/e2e), for a quick check while editing.
test-fast: setup system-packages
	$(BIN)/pytest --ignore=tests/e2e

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check .
	$(BIN)/snakemake --lint -n

clean-results:
	rm -rf results logs .snakemake

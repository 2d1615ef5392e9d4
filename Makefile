# Two commands do all set-up on a fresh Debian machine with Python 3.11:
#   make run   - install, build the embedded offline resources, run the whole workflow
#   make test  - install, then the whole test suite (unit, workflow and lint)
SHELL := /bin/bash
PYTHON ?= python3.11
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

# Debian packages: ICU headers + pkg-config to build PyICU; dpkg/apt for the embedded
# resources (LibreOffice help, FreeDict); headless Chromium for the test that opens the
# Snakemake report (tests/e2e/test_report.py). Installed only when missing.
system-packages:
	@missing=""; for p in libicu-dev pkg-config chromium; do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$missing; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq $$missing; fi; \
	fi

$(STAMP): pyproject.toml | system-packages
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch is pinned (==2.13.0) so pip takes the CPU wheel; never an unpinned torch.
	$(BIN)/pip install -q -e ".[dev]"
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

test: setup
	$(BIN)/pytest

# Everything but the end-to-end workflow runs (tests/e2e), for a quick check while editing.
test-fast: setup
	$(BIN)/pytest --ignore=tests/e2e

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check .
	$(BIN)/snakemake --lint -n

clean-results:
	rm -rf results logs .snakemake

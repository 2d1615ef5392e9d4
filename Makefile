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

.PHONY: run test test-fast setup lint system-packages clean-results

setup: $(STAMP)

# Debian packages: ICU headers + pkg-config to build PyICU; dpkg/apt for the embedded
# resources (LibreOffice help, FreeDict). Installed only when missing.
system-packages:
	@missing=""; for p in libicu-dev pkg-config; do \
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

run: setup
	$(BIN)/snakemake all --profile profiles/laptop --cores $(CORES) --configfile $(CONFIG)
	@echo
	@echo "results:      $$(pwd)/results/$$($(BIN)/python -c 'import yaml,sys; print(yaml.safe_load(open("$(CONFIG)"))["name"])')/"
	@echo "tables:       $$(pwd)/results/$$($(BIN)/python -c 'import yaml,sys; print(yaml.safe_load(open("$(CONFIG)"))["name"])')/tables/tables.md"
	@echo "zero-shot:    $$(pwd)/results/$$($(BIN)/python -c 'import yaml,sys; print(yaml.safe_load(open("$(CONFIG)"))["name"])')/tables/zeroshot.md"
	@echo "MLflow store: $$(pwd)/results/mlflow.db"
	@echo "  browse it:  $(BIN)/mlflow ui --backend-store-uri sqlite:///$$(pwd)/results/mlflow.db"

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

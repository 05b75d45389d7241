# Two entry points (README): `make certify` and `make test`. Both set up .venv first and are
# idempotent: the install step reruns only when pyproject.toml changes.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= reports/certify-$(shell date +%Y%m%d-%H%M%S)

.PHONY: setup certify test lint selftest bench docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

certify: setup
	$(BIN)/lakecert run --out $(OUT)

test: setup
	$(BIN)/python -m pytest -n auto -q tests

lint: setup
	$(BIN)/ruff check conformance reference_impl tests scripts bench
	$(BIN)/mypy

selftest: setup
	$(BIN)/lakecert selftest

bench: setup
	$(BIN)/python bench/delta_profiles.py

docs: setup
	$(BIN)/lakecert requirements --markdown > docs/requirements.md

clean:
	rm -rf $(VENV) reports/*/ .hypothesis

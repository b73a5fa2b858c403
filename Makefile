# Two entry points on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= dev,llm,milvus,postgres,torch,meteor
comma := ,
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
export RAGDIAL_DATA ?= $(abspath ../shared/data)

.PHONY: demo test lint typecheck install system-deps clean mutation

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install 'torch==2.13.0'
	$(PY) -m pip install -e '.[$(EXTRAS)]'
	touch $@

install: $(STAMP)

system-deps:
	bash scripts/system-deps.sh

lint: install
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m ruff format --check src tests benchmarks

typecheck: install lint
	$(PY) -m mypy

# Tests run in a random order (pytest-randomly, in the dev extra): the seed is printed at the top of the run;
# `pytest -p randomly --randomly-seed=N` repeats an order, `-p no:randomly` turns it off.
test: system-deps install lint typecheck
	$(PY) -m pytest -q

# Mutation testing of the core modules (slow: not part of `make test`); see docs/testing.md.
MUTATION_ARGS ?= --modules metrics,understanding,task,retrieval --data both
mutation: install
	$(PY) scripts/mutation.py $(MUTATION_ARGS)

demo: install
	$(VENV)/bin/ragdial demo

clean:
	rm -rf $(VENV) build *.egg-info

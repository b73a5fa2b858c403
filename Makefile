# Two entry points on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= dev,llm,milvus,postgres,torch,meteor
comma := ,
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
export RAGDIAL_DATA ?= $(abspath ../shared/data)

.PHONY: demo test lint typecheck install system-deps clean

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

test: system-deps install lint typecheck
	$(PY) -m pytest -q

demo: install
	$(VENV)/bin/ragdial demo

clean:
	rm -rf $(VENV) build *.egg-info

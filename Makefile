# ponder — developer entry points. Every target bootstraps its own virtual environment.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck format bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ponder demo

test: $(STAMP)
	$(PY) -m pytest --cov=ponder --cov-report=term:skip-covered $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff format src tests bench
	$(VENV)/bin/ruff check --fix src tests bench

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) .bench-venv .cache build dist src/*.egg-info

# `make run` and `make test` install what they need into .venv on first use (and again when a
# requirements file changes), on a machine with only Python 3.11 and make.

PYTHON_FOR_VENV ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench reset clean-venv

run: $(STAMP)
	$(PY) local/run.py

test: $(STAMP)
	$(PY) -m pytest -n 2

bench: $(STAMP)
	for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

reset:
	rm -rf .local

clean-venv:
	rm -rf $(VENV)

$(PY):
	@$(PYTHON_FOR_VENV) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required: install python3.11")'
	$(PYTHON_FOR_VENV) -m venv $(VENV)

$(STAMP): $(PY) requirements.txt requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

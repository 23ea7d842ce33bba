# `make run` and `make test` install what they need into .venv on first use (and again when a
# requirements file changes), on a machine with only Python 3.11 and make.

# Byte code is written (__pycache__, ignored by git) even where the environment says PYTHONDONTWRITEBYTECODE:
# without it each of the suite's processes (2 workers and some hundred interpreters the tests start) compiled
# every module it imported again, and pytest rewrote every test module's asserts again (collection: 19.4 s of
# CPU a process without, 8.6 s with).
unexport PYTHONDONTWRITEBYTECODE

PYTHON_FOR_VENV ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test coverage fuzz simulate ledger lint format typecheck bench reset clean-venv sandbox browser

run: $(STAMP)
	@$(MAKE) --no-print-directory sandbox || echo "make run goes on, but every plugin call will fail until the sandbox works" >&2
	$(PY) local/run.py

# `make test` lints (ruff) and type-checks (mypy) first, so a lint or type error fails it before any
# test runs; then the whole suite on 2 processes. `make test FILE=tests/api/accounts/test_update.py`
# runs one file (or folder, or file::test) in one process and skips lint and type check to stay fast
# (`make lint typecheck` runs them alone). `--dist worksteal`: a process that runs out of tests takes some of the
# other's, so the suite's last minutes are not one process finishing a long test alone.
test: $(STAMP) sandbox browser $(if $(FILE),,lint typecheck)
	$(PY) -m pytest $(if $(FILE),$(FILE),-n 2 --dist worksteal $(if $(COVERAGE),$(COVERAGE_ARGS)))

# `make coverage`: `make test` measuring line coverage of chalicelib (.coveragerc), failing below 95 %; of the whole
# suite only (with FILE it is a plain `make test FILE=...`: a part of the suite covers a part of the code). Not in
# `make test` itself: coverage's tracer (sys.settrace on Python 3.11) slows every frame it is set over, measured or
# not, and the suite must stay within its budget. The tests stop it while the in-process moto answers a DynamoDB or
# S3 call (tests/support/untraced.py; the same lines recorded: tests/architecture/test_untraced_aws_calls.py), which
# takes about 40 % of its cost away (tests/api/accounts side by side: 10.3 s of CPU without coverage, 21.2 s with
# every call traced, 17.8 s with those untraced; benchmarks/README.md "The suite's own cost, stop 43").
COVERAGE_ARGS := --cov=chalicelib --cov-fail-under=95 --cov-report=term-missing:skip-covered
# PAS_COVERAGE_EVERY_TEST=1: every test measured, the generative ones tests/support/coverage_scope.py lists too (without
# it they run untraced, and the total is a lower bound: 96.6 % at stop 46, benchmarks/README.md).
coverage:
	@PAS_COVERAGE_EVERY_TEST=1 $(MAKE) --no-print-directory test COVERAGE=1

# The fuzzing of `make test` (tests/architecture/test_fuzzing.py: schemathesis over /openapi.json, over 2,500
# requests) for longer: FUZZ_EXAMPLES an operation, a hypothesis seed of its own each run, and schemathesis's
# coverage phase (some 25,000 deterministic boundary cases, too many for make test's budget).
FUZZ_EXAMPLES ?= 500
fuzz: $(STAMP) sandbox
	PAS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) PAS_FUZZ_RANDOM=1 PAS_FUZZ_COVERAGE=1 $(PY) -m pytest -n 2 tests/architecture/test_fuzzing.py

# The seeded fault simulation (tests/simulation/test_simulation.py, its workload in workload.py) over SEEDS seeds (0 to SEEDS-1) of LENGTH steps
# each, or one SEED; a failing seed prints the shortest step list found that still fails, replayed with SEED=s
# STEPS=i,j,k. `make test` runs its share: 200 seeds of 3 steps (PAS_SIMULATION_SEEDS, PAS_SIMULATION_LENGTH there).
# The nightly size is this default (benchmarks/README.md, issue 31: seeds per minute).
SEEDS ?= 1000
LENGTH ?= 14
simulate: $(STAMP) sandbox
	PAS_SIMULATION_SEEDS=$(SEEDS) PAS_SIMULATION_LENGTH=$(LENGTH) $(if $(SEED),PAS_SIMULATION_SEED=$(SEED)) \
	  $(if $(STEPS),PAS_SIMULATION_STEPS=$(STEPS)) $(PY) -m pytest -n 2 tests/simulation/test_simulation.py

# The ledger's property tests (tests/jobs/test_billing_ledger.py) over LEDGER_HISTORIES random histories
# (`make test` runs 240).
LEDGER_HISTORIES ?= 2000
ledger: $(STAMP) sandbox
	PAS_LEDGER_HISTORIES=$(LEDGER_HISTORIES) $(PY) -m pytest -n 2 tests/jobs/test_billing_ledger.py

# Configuration: ruff.toml, mypy.ini (strict on app.py, chalicelib and pas_cli; the tests at mypy's default).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# ruff's formatter as ruff.toml configures it, applied (`make lint` checks it). The same checks run before each
# commit with pre-commit (.pre-commit-config.yaml).
format: $(STAMP)
	$(VENV)/bin/ruff format .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Tenant plugins run inside bubblewrap with seccomp filters built by libseccomp (chalicelib/sandbox/
# kernel.py). Installed here when missing and we are root; otherwise a clear message says how.
sandbox: $(STAMP)
	@command -v bwrap >/dev/null 2>&1 && $(PY) -c 'import pyseccomp' >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap and libseccomp (the plugin sandbox)"; \
	    apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap libseccomp2 >/dev/null; \
	  else \
	    echo "tenant plugins run inside bubblewrap with libseccomp: install them" \
	         "(Debian/Ubuntu: sudo apt-get install bubblewrap libseccomp2; Fedora: sudo dnf install" \
	         "bubblewrap libseccomp) and run make again" >&2; exit 1; \
	  fi; }
	@$(PY) -c 'from chalicelib.sandbox import kernel; kernel.check()' || { \
	  echo "the plugin sandbox cannot start on this machine (see above)" >&2; exit 1; }

# The docs page is tested in a real headless browser (tests/api/apidocs): Debian's chromium, installed here
# when missing and we are root; otherwise a clear message says how.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (the docs page's test runs in it)"; \
	    apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "the docs page is tested in headless chromium: install it (Debian/Ubuntu: sudo apt-get install" \
	         "chromium) and run make again" >&2; exit 1; \
	  fi; }

bench: $(STAMP)
	for script in benchmarks/[!_]*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

reset:
	rm -rf .local

clean-venv:
	rm -rf $(VENV)

$(PY):
	@$(PYTHON_FOR_VENV) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required: install python3.11")'
	@echo "creating $(VENV) (Python 3.11)"
	$(PYTHON_FOR_VENV) -m venv $(VENV)

# pip's own output, a line a package and its progress bars: a first install takes minutes. Then the command-line
# tool `pas` (pas_cli/, pyproject.toml) as an editable install: .venv/bin/pas. Its dependencies are pinned in
# requirements-dev.txt, and the build uses the venv's own setuptools (no isolated build environment to download).
$(STAMP): $(PY) requirements.txt requirements-dev.txt pyproject.toml
	@echo "installing requirements-dev.txt (and requirements.txt) into $(VENV): a few minutes on a first run"
	$(PY) -m pip install --progress-bar on -r requirements-dev.txt
	@echo "installing the command-line tool pas into $(VENV)/bin"
	$(PY) -m pip install --quiet --no-deps --no-build-isolation --editable .
	touch $(STAMP)
	@echo "$(VENV) is ready"

# Mutation testing (mutmut, settings in setup.cfg) of the pure modules against their unit tests: one
# module at a time, MUTATE_WORKERS processes, then the score per module (killed / mutants; a mutant no
# test runs counts as surviving). Fails when a module scores below MUTATE_MIN percent.
MUTATE_MODULES := chalicelib.core.money chalicelib.core.durations chalicelib.core.clock chalicelib.core.context \
  chalicelib.core.errors chalicelib.core.ids chalicelib.core.paging chalicelib.core.permissions \
  chalicelib.core.contacts chalicelib.core.records \
  chalicelib.tables.constraints chalicelib.tables.versions chalicelib.priceable.lifecycle chalicelib.priceable.rating \
  chalicelib.priceable.underwriting chalicelib.priceable.elements chalicelib.priceable.checks \
  chalicelib.billing.delinquency.calculator chalicelib.billing.installments.lattice \
  chalicelib.billing.installments.allocation chalicelib.billing.installments.plans chalicelib.billing.invoices.generator \
  chalicelib.billing.invoices.fees chalicelib.billing.invoices.consolidation chalicelib.billing.payments.allocation \
  chalicelib.billing.writeoffs.allocation
MUTATE_WORKERS ?= 1
MUTATE_MIN ?= 90

.PHONY: mutate
mutate: $(STAMP)
	rm -rf mutants && mkdir mutants
	@for module in $(MUTATE_MODULES); do \
	  echo "mutating $$module"; \
	  $(VENV)/bin/mutmut run --max-children $(MUTATE_WORKERS) "$$module.*" >mutants/run.log 2>&1 \
	    || { tail -30 mutants/run.log; exit 1; }; \
	done
	@$(VENV)/bin/mutmut results --all true | awk -v min=$(MUTATE_MIN) ' \
	  /__mutmut_[0-9]+: / { name = $$1; sub(/:$$/, "", name); sub(/\.x[^.]*__mutmut_[0-9]+$$/, "", name); \
	    status = $$0; sub(/^[^:]*: /, "", status); if (status == "not checked" || status == "skipped") next; \
	    total[name]++; if (status == "killed" || status == "timeout") killed[name]++; \
	    else if (status != "survived") print "  " $$1 " " status; } \
	  END { for (m in total) printf "%-32s %4d / %4d killed  %5.1f %%\n", m, killed[m], total[m], 100 * killed[m] / total[m] | "sort"; \
	    close("sort"); for (m in total) if (100 * killed[m] < min * total[m]) { print m " is below " min " %"; bad = 1 } \
	    exit bad }'
	@echo "survivors: $(VENV)/bin/mutmut results; one of them: $(VENV)/bin/mutmut show NAME"

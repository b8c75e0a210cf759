# cxfab — one entry point for setup, tests, the lab and the demo.
#
#   make demo        the main job: lab up, site.yml, verify.yml, report, lab down
#   make test        everything CI runs (lint, unit, integration, native, lab tier)
#   make test-fast   lint + unit tests (seconds)
#
# Every target runs `setup` first; setup is idempotent (stamps under .cache/).

SHELL       := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

TOP     := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV    := $(TOP)/.venv
CACHE   := $(TOP)/.cache
PYTHON  ?= python3
export PATH            := $(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG  := $(TOP)/ansible.cfg
# Bytecode goes to build/pycache, not into __pycache__ directories of the tree (the
# guests see the tree read-only; tests/lab/vm/lab.py compiles the NIC tool emulator for
# them on its own). It had been PYTHONDONTWRITEBYTECODE: every Python process compiled
# the repository's modules again. Unexported, since with a prefix and that variable
# both, Python reads bytecode only from the (empty) prefix and writes none, so every
# process compiled everything it imports: the integration tier took 639 s, not ~360.
export PYTHONPYCACHEPREFIX := $(TOP)/build/pycache
unexport PYTHONDONTWRITEBYTECODE

APT_PACKAGES := $(shell sed -e 's/\#.*//' -e '/^\s*$$/d' $(TOP)/requirements-apt.txt)
PYTEST_ARGS  ?=


# Area fragments, read before the rules below so their hooks take effect:
# each may add targets and append to SETUP_EXTRA, INTEGRATION_PREREQS, TEST_EXTRA.
-include $(TOP)/native/native.mk
-include $(TOP)/tests/lab/lab.mk

.PHONY: help setup setup-apt setup-venv lint test test-fast test-unit test-integration \
        test-system docs demo clean distclean bench-rollout lint-and-unit

help:  ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | sort | \
	  awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

# ---------------------------------------------------------------- setup
setup: setup-apt setup-venv $(SETUP_EXTRA)  ## Install apt packages and the venv (idempotent)

# Installs only the packages that are missing, so a second run touches nothing.
setup-apt:
	@missing=$$(for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo ">> apt: installing" $$missing; \
	  [ "$$(id -u)" = 0 ] || { echo "setup needs root for apt (missing: $$missing)" >&2; exit 1; }; \
	  $(TOP)/tests/tools/apt_no_start.sh $$missing; \
	fi

setup-venv: $(VENV)/.stamp

# Rebuilt only when the pinned requirements change.
$(VENV)/.stamp: requirements.txt requirements-runtime.txt
	@echo ">> venv: installing pinned requirements into .venv"
	@[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt
	@touch $@

# ---------------------------------------------------------------- quality
lint: setup  ## ruff, yamllint, ansible-lint (production profile), the import contracts
	ruff check .
	ruff format --check .
	yamllint -s .
	ansible-lint --profile production --offline -q
	PYTHONPATH=module_utils lint-imports --no-cache

docs: setup  ## Regenerate docs/data-model.md from the schema
	python -m tests.tools.gen_data_model_doc > docs/data-model.md

# ---------------------------------------------------------------- tests
test-unit: setup
	pytest -q tests/unit $(PYTEST_ARGS)

# The integration tier runs on six pytest-xdist workers: 376 s against 424 s with four on
# the same machine and tree (2026-11-28, CI=true, the lab down); its floor is its longest
# file (the canary's every-playbook run, 231 s). Alone it leaves no CPU idle (`vmstat 5`:
# 0 %, a run queue of 6-8). `make test` runs it beside the lab's own tests, in the CPU
# time they leave idle, at the weight of one session's autogroup at nice 19 (tests/lab/
# lab.mk, tests/lab/beside.sh). Tried before as nice or SCHED_IDLE processes (2026-11-28
# and -29) it slowed the lab's tests by half or more: the guests run in sessions of their
# own, and the scheduler shares the CPUs between sessions before it looks at a process's
# nice value. A file stays on one worker unless it says SPREAD_TESTS = True
# (tests/integration/conftest.py).
INTEGRATION_WORKERS ?= 6
test-integration: setup $(INTEGRATION_PREREQS)
	pytest -q -n $(INTEGRATION_WORKERS) --dist loadgroup --durations=25 tests/integration $(PYTEST_ARGS)

test-fast: lint test-unit  ## Lint and unit tests only

# The test tiers load tests/tools/pycache_site/sitecustomize.py in every Python process:
# the bytecode of what Ansible's local tasks import from their zips is kept too.
TEST_TIERS := test test-fast test-unit test-integration test-system lint-and-unit \
              test-native test-native-asan
$(TEST_TIERS): export PYTHONPATH := $(TOP)/tests/tools/pycache_site$(if $(PYTHONPATH),:$(PYTHONPATH))
$(TEST_TIERS): export CXFAB_LAB_PYCACHE := $(TOP)/build/pycache/zip

# Lint and the unit tests side by side: each keeps one core busy (ansible-lint 44 s, the
# unit tests 39 s on 2026-11-29); each one's output is printed whole when it ends.
lint-and-unit:
	$(MAKE) --no-print-directory -j2 --output-sync=target lint test-unit

# The integration tier runs inside test-system, beside the lab's own tests (tests/lab/lab.mk).
test: INTEGRATION_BESIDE := 1
test: lint-and-unit $(INTEGRATION_PREREQS) $(TEST_EXTRA)  ## Everything CI runs
	@echo ">> make test: all tiers passed"

# ---------------------------------------------------------------- benchmarks
BENCH_ARGS ?=
bench-rollout: setup  ## Time validation (Python, validate.yml) on 1/10/100 generated switch pairs -> reports/bench/
	python -m tests.tools.bench_rollout $(BENCH_ARGS)

# ---------------------------------------------------------------- the main job
demo: setup  ## The main job: lab up, site.yml + verify.yml on the lab, report, lab down (LAB_KEEP=1 keeps it)
	@rc=0; rm -rf reports/latest; $(MAKE) --no-print-directory lab-up || exit $$?; \
	echo ">> demo: deploying the lab fabric (playbooks/site.yml)"; \
	ansible-playbook -i inventories/lab playbooks/site.yml || rc=$$?; \
	if [ $$rc = 0 ]; then \
	  echo ">> demo: verifying the fabric (playbooks/verify.yml)"; \
	  ansible-playbook -i inventories/lab playbooks/verify.yml || rc=$$?; \
	fi; \
	if [ -f reports/latest/report.json ]; then \
	  echo ">> demo: report in $(TOP)/reports/latest/ (report.html, report.md, report.json, report.junit.xml, cxfab.prom)"; \
	  python -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(">> demo: %(passed)d passed, %(warned)d warned, %(failed)d failed, %(skipped)d skipped, %(waived)d waived" % s)' reports/latest/report.json; \
	fi; \
	if [ -z "$(LAB_KEEP)" ]; then $(MAKE) --no-print-directory lab-down; else echo ">> demo: lab kept (make lab-down stops it)"; fi; \
	exit $$rc

clean:  ## Remove build outputs and reports
	rm -rf build native/build reports

distclean: clean  ## Also remove the venv and the download cache
	rm -rf $(VENV) $(CACHE)

# Two commands for a fresh machine: `make demo` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# The demo needs a fraction of the toolchain (the `demo` extra: the sandbox and
# JupyterLab); the dev install holds all of it, so it stamps the demo's too.
DEMO_STAMP := $(VENV)/.installed-demo-stamp
PYTEST_ARGS ?=
# The suite on two processes (pytest-xdist), a file's tests together in one of them (the
# groups of tests/conftest.py), the slow files first: `make test JOBS=1` runs it in one.
JOBS ?= 2
XDIST = $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist loadgroup)

# The lowest versions pyproject.toml declares, in venvs of their own on the oldest Python
# 3.11 at hand (Debian's, 3.11.2 on bookworm, where there is one): paynb with its sandbox,
# then with its history too (deltalake raises the floor of pyarrow: see pyproject.toml).
OLDEST_VENV    ?= .venv-oldest
OLDEST_PYTHON  ?= $(firstword $(wildcard /usr/bin/python3.11) python3.11)
OLDEST_STAMP   := $(OLDEST_VENV)/.installed-stamp
HISTORY_VENV   := $(OLDEST_VENV)-history
HISTORY_STAMP  := $(HISTORY_VENV)/.installed-stamp
# What the oldest versions run: import and frames (lists from the sandbox), the bulk
# checks, compliance; then, with the history extra, the client against the sandbox and the
# forms (headless), whose submissions the guards judge by the history store, and the history.
OLDEST_TESTS   ?= tests/test_frames.py tests/client/test_check_many.py \
                  tests/compliance/test_rates.py
HISTORY_TESTS  ?= tests/client/test_sandbox.py tests/forms/test_single.py \
                  tests/forms/test_bulk.py tests/history/test_history.py \
                  tests/compliance/test_guards_history_store.py

.PHONY: demo test test-quick test-long test-oldest lint docs bench sandbox clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[demo]'
	touch $(DEMO_STAMP)

# A venv ($(1)) of paynb with the extras $(2), each dependency at its lower bound (uv's
# lowest-direct resolution; what they need in turn at its newest, as pip would pick), and
# the test tools (openpyxl: the tests read and write workbooks with pandas) at their
# newest within those pins.
define oldest_venv
	test -x $(1)/bin/python || $(OLDEST_PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet uv
	$(1)/bin/uv pip compile --quiet pyproject.toml $(2) --resolution lowest-direct \
		--python $(1)/bin/python --no-header -o $(1)/lowest.txt
	$(1)/bin/uv pip install --quiet --python $(1)/bin/python -r $(1)/lowest.txt
	$(1)/bin/uv pip install --quiet --python $(1)/bin/python --no-deps -e .
	$(1)/bin/uv pip install --quiet --python $(1)/bin/python -c $(1)/lowest.txt \
		pytest pytest-timeout pytest-xdist hypothesis time-machine responses openpyxl
	touch $(1)/.installed-stamp
endef

$(OLDEST_STAMP): pyproject.toml
	$(call oldest_venv,$(OLDEST_VENV),--extra sandbox)

$(HISTORY_STAMP): pyproject.toml
	$(call oldest_venv,$(HISTORY_VENV),--extra sandbox --extra history)

demo: $(DEMO_STAMP)
	$(VENV)/bin/paynb demo

sandbox: $(DEMO_STAMP)
	$(VENV)/bin/paynb sandbox

# ruff, then the import layers (pyproject.toml [tool.importlinter]) and the import graph
# (no cycle, few lazy imports: tests/test_import_graph.py), then the types ([tool.mypy]).
lint: $(STAMP)
	$(VENV)/bin/ruff check paynb tests benchmarks
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q tests/test_import_graph.py
	$(VENV)/bin/mypy

# The browser tests need Debian's Chromium; the script installs it where it can
# and never fails the build (the tests then skip and say why).
test: lint
	sh scripts/ensure_browser.sh $(PY)
	$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# While working: everything but the full-size fault runs and fuzzing (marked long).
test-quick: lint
	sh scripts/ensure_browser.sh $(PY)
	$(PY) -m pytest $(XDIST) -m "not long" $(PYTEST_ARGS)

# The lowest declared versions (above): CI (.ci/run) runs it after `make test`, apart,
# so that the suite itself keeps within its 15 minutes.
test-oldest: $(OLDEST_STAMP) $(HISTORY_STAMP)
	for venv in $(OLDEST_VENV) $(HISTORY_VENV); do $$venv/bin/python -c 'import sys, platform; \
		from importlib.metadata import version as v; print(sys.argv[1] + ": Python", \
		platform.python_version(), *(n + " " + v(n) for n in sys.argv[2:]))' $$venv pandas \
		pyarrow numpy pydantic matplotlib ipywidgets || exit 1; done
	$(OLDEST_VENV)/bin/python -m pytest $(XDIST) -m "not long" $(OLDEST_TESTS) $(PYTEST_ARGS)
	$(HISTORY_VENV)/bin/python -m pytest $(XDIST) -m "not long" $(HISTORY_TESTS) $(PYTEST_ARGS)

test-long: $(STAMP)
	$(PY) -m pytest $(XDIST) -m long $(PYTEST_ARGS)

docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

bench: $(STAMP)
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) $(OLDEST_VENV) $(HISTORY_VENV) site .pytest_cache .ruff_cache .mypy_cache .import_linter_cache

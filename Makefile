# Two commands for a fresh machine: `make demo` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# The demo needs a fraction of the toolchain (the `demo` extra: the sandbox and
# JupyterLab); the dev install holds all of it, so it stamps the demo's too.
DEMO_STAMP := $(VENV)/.installed-demo-stamp
PYTEST_ARGS ?=

.PHONY: demo test test-quick test-long lint docs bench sandbox clean

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
	$(PY) -m pytest $(PYTEST_ARGS)

# While working: everything but the full-size fault runs and fuzzing (marked long).
test-quick: lint
	sh scripts/ensure_browser.sh $(PY)
	$(PY) -m pytest -m "not long" $(PYTEST_ARGS)

test-long: $(STAMP)
	$(PY) -m pytest -m long $(PYTEST_ARGS)

docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

bench: $(STAMP)
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) site .pytest_cache .ruff_cache .mypy_cache .import_linter_cache

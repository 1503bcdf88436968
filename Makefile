# The two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
# torch is pinned here, never in pyproject.toml: an open range pulls a multi-GB CUDA build.
TORCH_VERSION ?= 2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.mlsmoke-installed
SHELL_SCRIPTS := $(shell git ls-files '*.sh' .ci/run 2>/dev/null)

.PHONY: install test lint demo bench bench-quick clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "torch==$(TORCH_VERSION)" -e ".[dev]"
	touch $@

test: lint
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/black --check --quiet hooks tests benchmarks
	$(BIN)/flake8 hooks tests benchmarks
	$(BIN)/shellcheck $(SHELL_SCRIPTS)
	$(BIN)/mlsmoke strict-mode $(SHELL_SCRIPTS)

demo: $(STAMP)
	bash demo/demo.sh

bench: $(STAMP)
	$(BIN)/python -m benchmarks

bench-quick: $(STAMP)
	$(BIN)/python -m benchmarks --quick

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

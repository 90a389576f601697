# Kernel Gym: `make demo` runs the main job, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2

.PHONY: venv demo test bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# Grade every shipped solution of the l1 suite (the smoke suite) and print a result table.
demo: venv
	$(BIN)/kgym solutions --suite l1 --parallel $(JOBS)

test: venv
	$(BIN)/python -m pytest -q -n $(JOBS)

# Wall time to grade every shipped solution, and the fixed overhead of one grade.
bench: venv
	$(BIN)/python scripts/bench_grading.py

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info

# Kernel Gym: `make demo` runs the main job, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2

RUNTIME_STAMP := $(VENV)/.sandbox-runtime

.PHONY: venv demo test bench clean

venv: $(STAMP) $(RUNTIME_STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# bubblewrap (installed when missing and we are root with apt) and, for root,
# the world-readable runtime venv the unprivileged sandbox user runs.
$(RUNTIME_STAMP): sandbox/build_runtime.sh
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		{ apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; }; } || \
		echo "warning: bubblewrap is not installed and cannot be installed here; see README, Sandbox"
	@if [ "$$(id -u)" = 0 ]; then sandbox/build_runtime.sh; fi
	touch $(RUNTIME_STAMP)

# Grade every shipped solution of the l1 suite (the smoke suite) and print a result table.
demo: venv
	$(BIN)/kgym solutions --suite l1 --parallel $(JOBS)

test: venv
	$(BIN)/python -m pytest -q -n $(JOBS)

# Wall time to grade every shipped solution, and the fixed overhead of one grade.
bench: venv
	$(BIN)/python scripts/bench_grading.py
	$(BIN)/python scripts/bench_sandbox.py
	$(BIN)/python scripts/bench_timer.py

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info

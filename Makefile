# Kernel Gym: `make demo` runs the main job, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2

RUNTIME_STAMP := $(VENV)/.sandbox-runtime

.PHONY: venv demo test lint bench clean screenshot

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

# Run the `solutions` agent over the l1 suite (the smoke suite) into a fresh run
# folder, print the aggregate summary, and build the leaderboard site from it.
DEMO_RUN ?= runs/demo-$(shell date -u +%Y%m%dT%H%M%SZ)
SITE ?= build/site

demo: venv
	$(BIN)/kgym run --agent solutions --suite l1 --attempts 1 --concurrency $(JOBS) --out $(DEMO_RUN)
	$(BIN)/kgym leaderboard build $(DEMO_RUN) --out $(SITE)

test: venv
	$(BIN)/python -m pytest -q -n $(JOBS)

# ruff (lint and format check) over the code and mypy over gym (config in pyproject.toml).
lint: venv
	$(BIN)/ruff check gym tests scripts references
	$(BIN)/ruff format --check gym tests scripts references
	$(BIN)/mypy

# Wall time to grade every shipped solution, and the fixed overhead of one grade.
bench: venv
	$(BIN)/python scripts/bench_grading.py
	$(BIN)/python scripts/bench_sandbox.py
	$(BIN)/python scripts/bench_timer.py

# Regenerate docs/leaderboard.png (the README's screenshot) with headless chromium.
screenshot: venv
	$(BIN)/python scripts/screenshot_leaderboard.py

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info

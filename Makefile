# Kernel Gym: `make demo` runs the main job, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2

RUNTIME_STAMP := $(VENV)/.sandbox-runtime

.PHONY: venv demo test test-fast lint docs bench clean screenshot test-integrations

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
	$(BIN)/python scripts/build_docs.py
	$(BIN)/kgym leaderboard build $(DEMO_RUN) --out $(SITE)

# Every test: the fast tier first (make test-fast: its coverage printed, so CI prints it), then every
# other tier (sandboxes, browser, frameworks present, slow); the two together are the whole suite.
test: test-fast
	$(BIN)/python -m pytest -q -n $(JOBS) -m "not ($(FAST_TIER))"

# The fast tier: no sandbox, no browser, no GPU, no framework, nothing slow (a few minutes at most),
# with coverage of the gym package printed; a test that starts a sandbox here fails and says to mark it.
FAST_TIER := not sandbox and not browser and not gpu and not integration and not slow
test-fast: venv
	KGYM_TEST_TIER=fast $(BIN)/python -m pytest -q -n $(JOBS) -m "$(FAST_TIER)" --cov=gym --cov-report=term:skip-covered

# The docs site: docs/ plus the reference generated from the code, built strictly into build/docs.
docs: venv
	$(BIN)/python scripts/build_docs.py

# The RL-framework adapters' tests (tests/integrations) in a venv of their own: openenv-core,
# verifiers, verl and skyrl-gym pull in large stacks (~220 packages) the core venv does without.
# KGYM_REQUIRE_INTEGRATIONS=1 turns a missing framework into a failure, not a skip.
IVENV ?= .venv-integrations
ISTAMP := $(IVENV)/.installed

$(ISTAMP): pyproject.toml
	test -x $(IVENV)/bin/python || $(PYTHON) -m venv $(IVENV)
	$(IVENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[integrations]'
	$(IVENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --upgrade --target $(IVENV)/verl-0.7 'verl==0.7.1'
	touch $(ISTAMP)

test-integrations: venv $(ISTAMP)
	KGYM_REQUIRE_INTEGRATIONS=1 $(IVENV)/bin/python -m pytest -q -n $(JOBS) tests/integrations tests/schema/test_descriptions.py

# ruff (lint and format check) over the code and mypy over gym (config in pyproject.toml).
lint: venv
	$(BIN)/ruff check gym tests scripts references examples kernel_gym.py setup.py
	$(BIN)/ruff format --check gym tests scripts references examples kernel_gym.py setup.py
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
	rm -rf $(VENV) $(IVENV) .pytest_cache *.egg-info

# The GPU check on a lent GPU box (README, GPU check): the box has torch, Triton
# and numpy but not the grader's other needs, and no network. gpu-wheelhouse
# downloads those (pydantic and its dependencies) as binary wheels for each
# CPython the box may run into an ignored folder that travels with the repo;
# scripts/gpu_check.sh installs them there into a private folder. gpu-selftest
# runs the same flow on CPU in a venv holding only torch, Triton and numpy.
GPU_WHEELHOUSE ?= wheelhouse/gpu
GPU_PYTHONS ?= 3.11 3.12 3.13 3.14
GPU_WHEELS ?= pydantic>=2.6,<3
GPU_WHEELHOUSE_MAX_MB ?= 20

.PHONY: gpu-wheelhouse gpu-selftest

gpu-wheelhouse:
	rm -rf $(GPU_WHEELHOUSE)
	$(MAKE) --no-print-directory $(GPU_WHEELHOUSE)/.complete

$(GPU_WHEELHOUSE)/.complete:
	mkdir -p $(GPU_WHEELHOUSE)
	for version in $(GPU_PYTHONS); do \
		$(PYTHON) -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
			--platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --implementation cp \
			--python-version $$version --abi cp$$(echo $$version | tr -d .) \
			--dest $(GPU_WHEELHOUSE) '$(GPU_WHEELS)' || exit 1; \
	done
	@du -sh $(GPU_WHEELHOUSE)
	@size=$$(du -sm $(GPU_WHEELHOUSE) | cut -f1); [ "$$size" -le $(GPU_WHEELHOUSE_MAX_MB) ] || \
		{ echo "$(GPU_WHEELHOUSE) is $$size MiB, over $(GPU_WHEELHOUSE_MAX_MB) MiB" >&2; exit 1; }
	touch $@

gpu-selftest: $(GPU_WHEELHOUSE)/.complete
	KGYM_WHEELHOUSE=$(abspath $(GPU_WHEELHOUSE)) scripts/gpu_check.sh --selftest

"""Every environment variable the gym reads: its name, type, default and what it does, in one place.

Nothing else in the gym reads `os.environ` for a `KGYM_*` variable: code asks an accessor here
(`settings.job_dir()`, `settings.sandbox_uid_base()`, ...), which reads the variable at each call
(so a test's `monkeypatch.setenv` is seen at once) and turns it into its type. An empty value counts
as unset. The docs' variable reference (scripts/build_docs.py) is generated from `VARIABLES`, and
`TEST_VARIABLES` lists the ones only the test suite and the scripts read.

A value that cannot be read as its type (`KGYM_SANDBOX_UID=abc`) raises `SettingError`, naming the
variable, rather than a bare ValueError from deep inside a grade.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gym.errors import SettingError

Kind = Literal["text", "secret", "integer", "path", "paths"]


@dataclass(frozen=True)
class Variable:
    """One environment variable the gym reads."""

    # Its name, KGYM_*.
    name: str
    # How its value is read: text, secret (text never logged), integer, path, or paths (os.pathsep-separated).
    kind: Kind
    # What the gym does when it is unset, in words (or the literal default).
    default: str
    # What it does, one sentence for the docs.
    description: str
    # Who reads it: the gym itself, or only the test suite and the scripts.
    scope: Literal["gym", "tests"] = "gym"


_ALL: tuple[Variable, ...] = (
    # --- tasks
    Variable("KGYM_TASKS", "paths", "none", "More task roots to search, `os.pathsep`-separated (as `kgym --tasks DIR`)."),
    Variable("KGYM_USER_TASKS", "path", "`$XDG_DATA_HOME/kgym/tasks`", "The user task root `kgym import` writes to."),
    Variable("KGYM_ROOT", "path", "this checkout", "Another checkout whose shipped `tasks/` and `references/` are used instead of this one's."),
    # --- grading
    Variable("KGYM_BASELINE_CACHE", "path", "`$XDG_CACHE_HOME/kgym/baselines`", "The cached reference baselines' folder."),
    Variable("KGYM_LOCK_DIR", "path", "the system temp folder", "Where the per-GPU lock files live."),
    # --- sandboxes
    Variable("KGYM_SANDBOX_UID", "integer", "61000", "The first uid the bubblewrap sandbox leases for its unprivileged workers."),
    Variable("KGYM_SANDBOX_PYTHON", "path", "the runtime venv's (as root), else this interpreter", "The Python the bubblewrap sandbox runs the worker with."),
    Variable("KGYM_SANDBOX_RUNTIME", "path", "/opt/kgym/runtime", "The world-readable runtime venv the sandbox uid runs."),
    Variable("KGYM_DOCKER_IMAGE", "text", "kgym-sandbox:local", "The docker sandbox's image."),
    Variable("KGYM_DOCKER_PYTHON", "path", "`$KGYM_SANDBOX_RUNTIME/bin/python`", "The Python inside the docker image."),
    Variable("KGYM_JOB_DIR", "path", "/dev/shm when it has room, else the temp folder", "Where job folders are made."),
    Variable("KGYM_WARM_MAX", "integer", "8", "The most warm workers a pool keeps ready."),
    # --- execution
    Variable("KGYM_RAY_PID_DIR", "path", "unset: not recorded", "Where the Ray executor's workers record their process ids (for cleanup)."),
    # --- serving and the RL adapters
    Variable("KGYM_SERVE_STATE", "path", "`$XDG_DATA_HOME/kgym/serve`", "The folder `kgym serve` records submissions and episodes in."),
    Variable("KGYM_SERVE_TOKEN", "secret", "none: loopback only", "The bearer token `kgym serve` requires, and the one its clients and the RL adapters send."),
    Variable("KGYM_SERVER_URL", "text", "none: grade in the adapter's own process", "A running `kgym serve` the RL adapters grade on."),
    Variable("KGYM_SANDBOX", "text", "bwrap", "The sandbox of the verl adapter's in-process grades."),
    Variable("KGYM_MAX_ATTEMPTS", "integer", "3", "Submissions per multi-turn episode of the verl adapter."),
    # --- read only by the test suite and the scripts
    Variable("KGYM_REQUIRE_SANDBOXES", "text", "none", "Comma-separated backends (bwrap,docker) whose tests must run, not skip (CI sets it).", "tests"),
    Variable("KGYM_REQUIRE_BROWSER", "text", "unset", "1: the browser tests must run (chromium present), not skip.", "tests"),
    Variable("KGYM_REQUIRE_INTEGRATIONS", "text", "unset", "1: the RL-framework tests must run in .venv-integrations, not skip.", "tests"),
    Variable("KGYM_CHROMIUM", "path", "the system chromium", "The chromium the browser tests and screenshots drive.", "tests"),
    Variable("KGYM_KERNELBENCH", "path", "unset: the fixtures only", "A KernelBench checkout to import for real in the tests.", "tests"),
    Variable("KGYM_FULL_CORPUS", "text", "unset", "1: the import tests walk the full OpInfo / model corpus, not a sample.", "tests"),
    Variable("KGYM_TEST_UID_BASE", "integer", "62000", "Where the sandbox tests' uid ranges start (for two test runs on one machine at once).", "tests"),
    Variable("KGYM_WHEELHOUSE", "path", "wheelhouse/gpu", "The wheels scripts/gpu_check.sh installs on the GPU box (what it lacks).", "tests"),
    Variable("KGYM_VERL_DRY_RUN", "text", "unset", "1: the verl example script only prints the command it would run.", "tests"),
    Variable("KGYM_VERL_LEGACY", "path", "`.venv-integrations/verl-0.7`", "Where the verl 0.7.1 package for the interaction tests is installed.", "tests"),
    Variable("KGYM_DRIVER_BWRAP", "text", "unset", "1: the verl 0.7 interaction test's driver grades under bwrap.", "tests"),
)

# name -> Variable, for every variable the gym itself reads.
VARIABLES: dict[str, Variable] = {variable.name: variable for variable in _ALL if variable.scope == "gym"}
# name -> Variable, for those only the test suite and the scripts read.
TEST_VARIABLES: dict[str, Variable] = {variable.name: variable for variable in _ALL if variable.scope == "tests"}


def raw(name: str) -> str | None:
    """The variable's value, None when unset or empty. Only for names in VARIABLES or TEST_VARIABLES."""
    if name not in VARIABLES and name not in TEST_VARIABLES:
        raise KeyError(f"{name} is not a setting of gym.settings: add it to its list")
    return os.environ.get(name) or None


def text(name: str) -> str | None:
    return raw(name)


def integer(name: str) -> int | None:
    value = raw(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise SettingError(name, value, "integer") from None


def path(name: str, *, resolve: bool = False) -> Path | None:
    value = raw(name)
    if value is None:
        return None
    chosen = Path(value).expanduser() if resolve else Path(value)
    return chosen.resolve() if resolve else chosen


def paths(name: str) -> list[Path]:
    """Every non-empty entry of an `os.pathsep`-separated list, expanded and resolved."""
    value = raw(name) or ""
    return [Path(entry).expanduser().resolve() for entry in value.split(os.pathsep) if entry]


# --- the typed accessors the gym calls ------------------------------------------------------------


def extra_task_roots() -> list[Path]:
    return paths("KGYM_TASKS")


def user_tasks_override() -> Path | None:
    return path("KGYM_USER_TASKS", resolve=True)


def project_root_override() -> Path | None:
    value = raw("KGYM_ROOT")
    return Path(value).resolve() if value else None


def baseline_cache_override() -> Path | None:
    return path("KGYM_BASELINE_CACHE", resolve=True)


def lock_dir() -> Path | None:
    return path("KGYM_LOCK_DIR")


def sandbox_uid_base() -> int | None:
    return integer("KGYM_SANDBOX_UID")


def sandbox_python() -> Path | None:
    return path("KGYM_SANDBOX_PYTHON")


def sandbox_runtime() -> Path:
    return path("KGYM_SANDBOX_RUNTIME") or Path("/opt/kgym/runtime")


def docker_image() -> str | None:
    return text("KGYM_DOCKER_IMAGE")


def docker_python() -> str:
    """The interpreter inside the docker image."""
    return text("KGYM_DOCKER_PYTHON") or f"{sandbox_runtime()}/bin/python"


def job_dir() -> str | None:
    return text("KGYM_JOB_DIR")


def warm_max() -> int | None:
    return integer("KGYM_WARM_MAX")


def ray_pid_dir() -> Path | None:
    return path("KGYM_RAY_PID_DIR")


def serve_state_override() -> Path | None:
    return path("KGYM_SERVE_STATE", resolve=True)


def serve_token() -> str | None:
    return text("KGYM_SERVE_TOKEN")


def server_url() -> str | None:
    return text("KGYM_SERVER_URL")


def adapter_sandbox() -> str | None:
    return text("KGYM_SANDBOX")


def adapter_attempts() -> int | None:
    return integer("KGYM_MAX_ATTEMPTS")

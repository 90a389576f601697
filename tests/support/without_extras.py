"""Run `kgym ARGS...` as on a core-only install (`pip install kernel-gym`, no extras).

    python tests/support/without_extras.py list

Importing any package an extra installs (and the libraries only those pull in)
raises ModuleNotFoundError, as it does where they are absent.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

# The extras' packages (gym/extras.py) plus what only they bring along (starlette: fastapi; markupsafe: jinja2).
# Not pygments: the 'site' extra names it, but rich (core) depends on it, so every install has it.
BLOCKED = frozenset({"fastapi", "starlette", "uvicorn", "websockets", "mcp", "openai", "docker", "jinja2", "markupsafe"})


class NoExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> ModuleSpec | None:
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: the extras are not installed)", name=name)
        return None


def block_extras() -> None:
    sys.meta_path.insert(0, NoExtras())
    for name in [name for name in sys.modules if name.partition(".")[0] in BLOCKED]:
        del sys.modules[name]


def main() -> None:
    block_extras()
    from gym.cli import app

    sys.argv[0] = "kgym"
    app()


if __name__ == "__main__":
    main()

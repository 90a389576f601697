"""The gym's layers, lowest first: a module may import its own layer and the layers below it, never
one above, at module level, inside a function or under `typing.TYPE_CHECKING`
(`tests/test_layers.py` parses every module and holds the code to it, and finds no import cycle
between modules either). Layers on one line are peers: neither imports the other.

    status                          a grade's Status (the verdict both errors and schema name)
    errors, layers                  the exception tree; this order
    settings                        every KGYM_* environment variable
    lazy, extras, registry, log     lazy re-exports; optional extras; the plugin registry; the kgym logger
    schema                          the serialised models (GradeResult, wire messages, records)
    worker                          the sandbox side: imports nothing else of the gym at all
    contracts                       closeness checks
    tasks                           task files, references, inputs, prompts, importers, splits
    devices                         which GPU a grade gets and who holds it
    sandbox                         backends that run a job, warm pools
    grading                         one grade: audit, plan, job, judge, timing, baselines, signal
    execution                       executors (local, ray) and batch grading
    harness                         Env, rewards, agents, run folders, the runner
    serve                           the HTTP/WebSocket server, MCP, sessions, auth, its client
    integrations, site              RL framework adapters; the leaderboard site
    doctor                          `kgym doctor`'s checks
    cli                             the `kgym` command
"""

from __future__ import annotations

# Lowest first; each entry is one rank of peers, named by the first component under `gym`.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("status",),
    ("errors", "layers"),
    ("settings",),
    ("lazy", "extras", "registry", "log"),
    ("schema",),
    ("worker",),
    ("contracts",),
    ("tasks",),
    ("devices",),
    ("sandbox",),
    ("grading",),
    ("execution",),
    ("harness",),
    ("serve",),
    ("integrations", "site"),
    ("doctor",),
    ("cli",),
)

# The package itself and this file: `gym/__init__.py` re-exports lazily (names as strings, gym.lazy).
ROOT_LAYER = "lazy"


def rank(component: str) -> int:
    """The rank of a first component under `gym` ("grading" -> 9); ValueError for one not listed."""
    for index, peers in enumerate(LAYERS):
        if component in peers:
            return index
    raise ValueError(f"gym.{component} is in no layer of gym.layers.LAYERS: add it there")

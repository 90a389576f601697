"""One registry for the gym's plugins: sandboxes, executors and agents, by kind and name.

    from gym.registry import register, lookup

    register("agent", "mine", "my_package.agents:MyAgent")     # a "module:attribute" string, imported on first use
    register("sandbox", "nsjail", NsjailSandbox())            # or the object itself

    @register("executor", "slurm")                          # or as a decorator
    def slurm_executor(**settings): ...

What a name stands for, by kind: a sandbox is a `gym.sandbox.base.Sandbox` instance (a class is
instantiated with no arguments); an executor is a factory called with the executor's settings
(`make_executor(name, **settings)`); an agent is an `Agent` subclass called with its options.

A third party adds one without editing the gym through a Python entry point in the groups
`kernel_gym.sandboxes`, `kernel_gym.executors` and `kernel_gym.agents` (pyproject.toml:
`[project.entry-points."kernel_gym.agents"] mine = "my_package.agents:MyAgent"`). Entry points are
read once, the first time a kind's names are asked for, and loaded only when their name is looked
up. A name the gym registers itself is never replaced by an entry point of the same name (a plugin
cannot stand in for `bwrap`); a later `register` call by code does replace it (tests do).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from importlib import metadata
from typing import Any, Literal, TypeVar, overload

from gym.errors import UnknownPlugin

Kind = Literal["sandbox", "executor", "agent"]
# The entry-point group each kind is read from.
ENTRY_POINT_GROUPS: dict[str, str] = {
    "sandbox": "kernel_gym.sandboxes",
    "executor": "kernel_gym.executors",
    "agent": "kernel_gym.agents",
}

# kind -> name -> the object, a "module:attribute" string, or an unloaded metadata.EntryPoint.
_ENTRIES: dict[str, dict[str, Any]] = {kind: {} for kind in ENTRY_POINT_GROUPS}
_SCANNED: set[str] = set()
_LOCK = threading.RLock()

T = TypeVar("T")


def entries(kind: Kind, *, scan: bool = True) -> dict[str, Any]:
    """The live table of `kind` (name -> object, "module:attribute" or entry point); `scan=False` leaves
    the installed entry points unread (a module that only registers its own, at import)."""
    _check(kind)
    if scan:
        _scan(kind)
    return _ENTRIES[kind]


@overload
def register(kind: Kind, name: str) -> Callable[[T], T]: ...


@overload
def register(kind: Kind, name: str, target: T) -> T: ...


def register(kind: Kind, name: str, target: Any = None) -> Any:
    """Register `target` (an object, or a "module:attribute" string imported on first lookup) as
    `name` of `kind`, replacing what was there; without `target`, a decorator that registers what it decorates."""
    _check(kind)
    if target is None:

        def decorate(value: T) -> T:
            register(kind, name, value)
            return value

        return decorate
    with _LOCK:
        _ENTRIES[kind][name] = target
    return target


def names(kind: Kind) -> list[str]:
    """Every name of `kind`: the gym's own, those registered by code, and the installed entry points'."""
    return sorted(entries(kind))


def lookup(kind: Kind, name: str) -> Any:
    """What `name` of `kind` stands for, imported or loaded now if it was not yet; UnknownPlugin if none."""
    table = entries(kind)
    with _LOCK:
        if name not in table:
            raise UnknownPlugin(kind, name, table)
        value = table[name]
    if isinstance(value, str):
        module_name, _, attribute = value.partition(":")
        value = getattr(importlib.import_module(module_name), attribute)
    elif isinstance(value, metadata.EntryPoint):
        value = value.load()
        if kind == "sandbox" and isinstance(value, type):
            value = value()
        with _LOCK:
            table[name] = value
    return value


def _check(kind: str) -> None:
    if kind not in ENTRY_POINT_GROUPS:
        raise ValueError(f"unknown plugin kind {kind!r} (kinds: {', '.join(ENTRY_POINT_GROUPS)})")


def _scan(kind: str) -> None:
    with _LOCK:
        if kind in _SCANNED:
            return
        _SCANNED.add(kind)
        for point in metadata.entry_points(group=ENTRY_POINT_GROUPS[kind]):
            # The gym's own names win: setdefault never replaces one registered before the scan.
            _ENTRIES[kind].setdefault(point.name, point)


def rescan(kind: Kind) -> None:
    """Read `kind`'s entry points again (after installing a plugin in a running process)."""
    _check(kind)
    with _LOCK:
        _SCANNED.discard(kind)
    _scan(kind)

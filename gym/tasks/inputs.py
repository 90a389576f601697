"""Seeded, deterministic inputs: public seeds per trial, mixed with a secret per run."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import torch

from gym.tasks.model import Shape, Task
from gym.tasks.references import inputs_fn

SEED_BITS = 63


def public_seed(task_id: str, dtype_name: str, shape_kind: str, shape_index: int) -> int:
    """A stable seed for one trial, derived from where it sits in the task."""
    digest = hashlib.sha256(f"{task_id}|{dtype_name}|{shape_kind}|{shape_index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> (64 - SEED_BITS)


def mix_seed(seed: int, secret: int | None) -> int:
    """Mix a per-run secret into a public seed (identity when there is no secret)."""
    if secret is None:
        return seed
    digest = hashlib.sha256(f"{seed}|{secret}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> (64 - SEED_BITS)


def new_secret() -> int:
    """A fresh per-run secret seed; it never leaves the trusted process."""
    return secrets.randbits(SEED_BITS)


def generate_inputs(task: Task, shape: Shape, dtype: torch.dtype, seed: int, device: torch.device) -> dict[str, Any]:
    """The task's inputs for one shape and dtype, reproducible from `seed`, on `device`."""
    generator = torch.Generator(device=device)
    generator.manual_seed(seed)
    values = inputs_fn(task)(dict(shape), dtype, generator, device)
    missing = [name for name in task.spec.params if name not in values]
    extra = [name for name in values if name not in task.spec.params]
    if missing or extra:
        raise ValueError(f"{task.spec.inputs} returned parameters {sorted(values)}, task params are {task.spec.params}")
    return {name: values[name] for name in task.spec.params}

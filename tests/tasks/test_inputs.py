"""Inputs are deterministic per seed, differ across seeds, and the secret changes them."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gym.grading.planning.plan import plan_trials
from gym.tasks.inputs import generate_inputs, mix_seed, public_seed
from gym.tasks.model import Task


def test_same_seed_same_inputs(vector_add: Task) -> None:
    shape = vector_add.spec.shapes.public[0]
    a = generate_inputs(vector_add, shape, torch.float32, 123, torch.device("cpu"))
    b = generate_inputs(vector_add, shape, torch.float32, 123, torch.device("cpu"))
    c = generate_inputs(vector_add, shape, torch.float32, 124, torch.device("cpu"))
    assert torch.equal(a["x"], b["x"]) and torch.equal(a["y"], b["y"])
    assert not torch.equal(a["x"], c["x"])
    assert list(a) == vector_add.spec.params


def test_secret_changes_every_trial(vector_add: Task) -> None:
    plain = plan_trials(vector_add, torch.device("cpu"), secret=None)
    again = plan_trials(vector_add, torch.device("cpu"), secret=None)
    secret = plan_trials(vector_add, torch.device("cpu"), secret=99)
    for p, a, s in zip(plain, again, secret):
        assert torch.equal(p.inputs["x"], a.inputs["x"])
        assert not torch.equal(p.inputs["x"], s.inputs["x"])


def test_hidden_trials_can_be_left_out(vector_add: Task) -> None:
    everything = plan_trials(vector_add, torch.device("cpu"), secret=1)
    public = plan_trials(vector_add, torch.device("cpu"), secret=1, include_hidden=False)
    # The hidden shapes, plus the heavy-tailed trial (gym.tasks.hardened) that only full grades carry.
    assert len(everything) == len(public) + len(vector_add.spec.shapes.hidden) + 1
    assert [trial.label for trial in everything][-1] == "float32 heavy-tailed #1"
    assert not any(trial.hidden for trial in public)


@settings(max_examples=50)
@given(st.integers(min_value=0, max_value=2**63 - 1), st.integers(min_value=0, max_value=2**63 - 1))
def test_mixed_seeds_are_valid_and_depend_on_the_secret(seed: int, secret: int) -> None:
    mixed = mix_seed(seed, secret)
    assert 0 <= mixed < 2**63
    assert mix_seed(seed, secret) == mixed
    assert mix_seed(seed, None) == seed
    if secret != 0:
        assert mixed != mix_seed(seed, secret - 1) or mixed == seed


def test_public_seeds_differ_by_position() -> None:
    seeds = {public_seed("l1/x", dtype, kind, index) for dtype in ("float32", "float16") for kind in ("public", "hidden") for index in range(3)}
    assert len(seeds) == 12

"""GradeSeeds names every random stream once, and each is the seed grades drew before it existed
(the same secret must keep grading the same inputs)."""

from __future__ import annotations

import random

import torch

from gym.grading.planning.plan import TimingRequest, plan_trials
from gym.grading.planning.seeds import GradeSeeds
from gym.tasks.inputs import mix_seed, public_seed
from gym.tasks.loader import find_task


def test_each_stream_is_the_seed_it_always_was() -> None:
    seeds = GradeSeeds("l1/softmax", 1234)
    assert seeds.trial("float32", "hidden", 2) == mix_seed(public_seed("l1/softmax", "float32", "hidden", 2), 1234)
    assert seeds.bench("float32", 1) == mix_seed(public_seed("l1/softmax", "float32", "bench", 1), 1234)
    assert seeds.timed("float32", "float32 public #1", 3) == mix_seed(public_seed("l1/softmax", "float32", "timed-float32 public #1", 3), 1234)
    assert seeds.warmup("float16", "x") == mix_seed(public_seed("l1/softmax", "float16", "warmup-x", 0), 1234)
    assert seeds.replay_inputs("float32", "t", 5) == mix_seed(public_seed("l1/softmax", "float32", "replay-t", 5), 1234)
    assert seeds.late_calls("t").random() == random.Random(mix_seed(public_seed("late-calls", "t", "", 0), 1234)).random()
    for stream, words in (
        (seeds.replay_choice(), ("replay", "", 0)),
        (seeds.counted(), ("signal", "counted", 0)),
        (seeds.reshuffle("t", 4), ("reshuffle", "t", 4)),
    ):
        assert stream.random() == random.Random(mix_seed(public_seed("l1/softmax", *words), 1234)).random()
    assert GradeSeeds("l1/softmax", None).trial("float32", "public", 0) == public_seed("l1/softmax", "float32", "public", 0)


def test_the_same_secret_plans_the_same_inputs_and_another_does_not() -> None:
    task = find_task("l1/vector_add")
    first, again, other = (plan_trials(task, torch.device("cpu"), secret, timing=TimingRequest(reps=2)) for secret in (7, 7, 8))
    seeds = [[call.seed for trial in trials for call in trial.calls] for trials in (first, again, other)]
    assert seeds[0] == seeds[1] and seeds[0] != seeds[2]

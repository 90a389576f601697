"""The witness's timed replay (gym.worker.replayer.replay_one): the first run's outputs are judged, the
fastest run is the kernels' time, and runs repeat, up to the request's `timed_runs`, only while the
fastest is above the item's `enough_s` (what the time floor needs). The tape and the clock are fakes
here (a real replay is tests/worker/test_tape_replay.py's): each run reads the next scripted seconds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from gym.worker import replayer
from gym.worker.tensor_io import read_tensor
from gym.worker.witness_protocol import ReplayItem, ReplayRequest, WitnessReport


class ScriptedTimer:
    """A CallTimer whose samples are `samples`, in order."""

    def __init__(self, samples: list[float]) -> None:
        self.samples = iter(samples)
        self.taken = 0
        self.last = 0.0

    def flush(self) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.last = next(self.samples)
        self.taken += 1

    def seconds(self) -> float:
        return self.last


class FakeReplay:
    """What replay_one uses of a TapeReplay: a tape with no launch steps, `run`, `reset` and the counts."""

    def __init__(self) -> None:
        self.tape = SimpleNamespace(steps=[])
        self.ops: dict[str, int] = {}
        self.anchor_calls: list[str] = []
        self.launches = 1
        self.runs = 0

    def run(self, kernels: Any, sync: Callable[[], None]) -> list[torch.Tensor]:
        self.runs += 1
        return [torch.full((4,), float(self.runs))]

    def reset(self) -> None:
        pass

    def mutated(self) -> list[str]:
        return []


SAMPLES = [0.5, 0.3, 0.05, 0.01, 0.2]


@pytest.mark.parametrize(
    ("enough_s", "runs", "seconds"),
    [
        (1.0, 1, 0.5),  # the first run already holds the floor: no second run
        (0.1, 3, 0.05),  # repeated until one is fast enough
        (0.001, 5, 0.01),  # never fast enough: every allowed run, the fastest counts
        (None, 5, 0.01),  # no target: every allowed run
    ],
)
def test_timed_runs_repeat_only_while_the_fastest_is_above_enough(tmp_path: Path, enough_s: float | None, runs: int, seconds: float) -> None:
    timer, replay = ScriptedTimer(SAMPLES), FakeReplay()
    kernels = SimpleNamespace(replayed=None, warm=set())
    item = ReplayItem(id=0, tape=0, args=[], timed=True, enough_s=enough_s)
    report = WitnessReport(submission_exit=0)
    record = replayer.replay_one(
        item, replay, kernels, tmp_path, torch.device("cpu"), timer, report, ReplayRequest(items=[], out_name="witness-test", timed_runs=5)
    )  # type: ignore[arg-type]
    assert record.ok, record.error
    assert timer.taken == replay.runs == record.timed_runs == runs and record.seconds == seconds
    # The first run's outputs are the ones judged.
    output = record.outputs[0].data
    assert output is not None and torch.equal(read_tensor(tmp_path, output), torch.ones(4))


@pytest.mark.parametrize(
    ("enough_s", "speed_runs", "runs"),
    [
        (1.0, 3, 3),  # the floor holds at once, yet the speed needs three runs
        (0.1, 2, 3),  # the floor needs a third run past the speed's two
        (0.001, 3, 5),  # never fast enough: every allowed run
    ],
)
def test_speed_runs_are_made_whatever_the_floor_needs(tmp_path: Path, enough_s: float, speed_runs: int, runs: int) -> None:
    timer, replay = ScriptedTimer(SAMPLES), FakeReplay()
    kernels = SimpleNamespace(replayed=None, warm=set())
    item = ReplayItem(id=0, tape=0, args=[], timed=True, enough_s=enough_s)
    request = ReplayRequest(items=[], out_name="witness-test", timed_runs=5, speed_runs=speed_runs)
    record = replayer.replay_one(item, replay, kernels, tmp_path, torch.device("cpu"), timer, WitnessReport(submission_exit=0), request)  # type: ignore[arg-type]
    assert record.ok, record.error
    assert record.run_seconds == SAMPLES[:runs] and record.timed_runs == runs and record.seconds == min(SAMPLES[:runs])

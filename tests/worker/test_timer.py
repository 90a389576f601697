"""The one timer, as do_bench times: flush, start event, call, end event, then sync.

A GPU is simulated by fake events and a fake flush buffer that log what
happens, so the order of operations is checked on CPU."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from gym.worker.timer import CallTimer, time_each, timed_call

CUDA = torch.device("cuda")


class Log(list[str]):
    pass


def fake_gpu(log: Log, elapsed_ms: float = 2.5) -> tuple[Any, Any]:
    names = iter(["start", "end"])

    class Event:
        def __init__(self) -> None:
            self.name = next(names)

        def record(self) -> None:
            log.append(f"record {self.name}")

        def synchronize(self) -> None:
            log.append(f"wait {self.name}")

        def elapsed_time(self, other: Event) -> float:
            log.append(f"elapsed {self.name}->{other.name}")
            return elapsed_ms

    class Flush:
        def zero_(self) -> None:
            log.append("flush")

    return Event, Flush()


def test_events_exist_before_the_first_sample() -> None:
    log = Log()
    events, flush = fake_gpu(log)
    CallTimer(CUDA, events=events, flush_buffer=flush)
    # Both CUDA events are materialised (recorded once) at construction, not at a sample's first record.
    assert log == ["record start", "record end", "wait end"]


def test_a_sample_is_flush_start_call_end_then_sync() -> None:
    log = Log()
    events, flush = fake_gpu(log, elapsed_ms=2.5)
    timer = CallTimer(CUDA, events=events, flush_buffer=flush)
    log.clear()

    @contextlib.contextmanager
    def trace() -> Iterator[None]:
        log.append("enter trace")
        yield
        log.append("leave trace")

    result, seconds = timed_call(timer, lambda: log.append("call") or 7, trace())
    assert result == 7 and seconds == pytest.approx(2.5e-3)
    assert log == ["flush", "enter trace", "record start", "call", "record end", "leave trace", "wait end", "elapsed start->end"]


def test_a_raising_call_leaves_the_context_and_propagates() -> None:
    log = Log()
    events, flush = fake_gpu(log)
    timer = CallTimer(CUDA, events=events, flush_buffer=flush)
    seen: list[BaseException | None] = []

    @contextlib.contextmanager
    def trace() -> Iterator[None]:
        try:
            yield
        except BaseException as error:
            seen.append(error)
            raise

    def boom() -> None:
        raise ValueError("kernel failed")

    with pytest.raises(ValueError):
        timed_call(timer, boom, trace())
    assert isinstance(seen[0], ValueError)


def test_time_each_makes_one_argset_at_a_time() -> None:
    alive: list[int] = []
    made = 0

    def argsets() -> Iterator[list[int]]:
        nonlocal made
        for index in range(4):
            made += 1
            alive.append(made)
            yield [index]

    calls: list[tuple[int, int]] = []
    samples = time_each(lambda args: calls.append((args[0], made)), argsets(), torch.device("cpu"))
    assert len(samples) == 4 and all(sample >= 0 for sample in samples)
    # Each call saw only the argsets made so far: they are generated lazily, one per call.
    assert calls == [(0, 1), (1, 2), (2, 3), (3, 4)]


def test_the_cpu_timer_measures_the_host_clock() -> None:
    import time

    timer = CallTimer(torch.device("cpu"))
    _, seconds = timed_call(timer, lambda: time.sleep(0.02))
    assert 0.015 < seconds < 0.5

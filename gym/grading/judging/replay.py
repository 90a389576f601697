"""The replay check: the answer must come from the kernels, shown outside the submission's reach.

In every job the submission's process records a tape of each call (gym.worker.tape).
When that process and everything it started are gone, the witness says so on its
private channel (gym.worker.witness); only then does this side pick what to replay
and generate its inputs, so the submission never saw either:

- for every trial, the tape of one of its calls (main, repeats, late calls: picked
  with the grade's secret), replayed on fresh inputs of the trial's shape;
- on a GPU, every timed call's own tape, on fresh inputs of its shape, timed; on
  CPU (interpreted timings) one timed call per timed trial, picked with the secret,
  which is that trial's replay as well.

The witness loads only the file's jit functions (gym.grading.intake.kernel_source),
compiles each launched specialization for a GPU target when there is no GPU, and
runs the tape's ops and launches. Here each replay's outputs are judged by the
contract's value checks against the reference on those fresh inputs; the ops the
tape ran are judged by the torch policy; and a timed call must not have been much
faster than its own kernels replayed alone (`ReplaySettings.time_floor`).

What this proves: the kernels the call launched, with the grids and arguments it
launched them with, compute a correct answer from inputs they never saw, with no
other code of the submission present, and the timed calls took at least about as
long as those kernels do. What it does not prove: anything about calls that were
not replayed beyond the trial they belong to (each is still checked by its own
outputs), or that a GPU's timing of the replay equals the candidate's own (the
replay is timed once per timed call; see ReplaySettings).
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import secrets
import shutil
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from gym.contracts import TrialEvidence
from gym.contracts.base import SubBatchRun
from gym.contracts.behaviour import BatchInvariantCheck, DeterministicCheck
from gym.errors import GradeFailure
from gym.grading.judging import launched_sources
from gym.grading.judging.integrity import Violation
from gym.grading.judging.judge import judge_timed
from gym.grading.judging.replay_evidence import replay_failure_status
from gym.grading.judging.verdict import Verdict, WitnessFigures, flag
from gym.grading.planning.anchors import recording_anchors, unmatched_anchor_calls
from gym.grading.planning.plan import CallPlan, Trial, timed_inputs
from gym.grading.planning.seeds import GradeSeeds
from gym.grading.running.job_files import on_device_of, read_model, read_outputs, write_args
from gym.grading.signal.training_signal import counted_slot
from gym.schema.result import Status
from gym.tasks.model import Task
from gym.tasks.references import oracle_outputs, reference_outputs
from gym.worker.dtypes import dtype_name
from gym.worker.protocol import REPORT_FILE, CallRecord, OutputRecord, WorkerReport, call_record_file
from gym.worker.tape import tape_file
from gym.worker.torch_policy import TRIPWIRES, forbidden
from gym.worker.witness_protocol import (
    COMPILE_TARGET,
    REPLAY_DIR,
    REPLAY_REQUEST_FILE,
    WITNESS_DONE,
    WITNESS_PREFIX,
    WITNESS_READY,
    WITNESS_REPORT_FILE,
    ReplayItem,
    ReplayRecord,
    ReplayRequest,
    WitnessReport,
)


@dataclass(frozen=True)
class ReplaySettings:
    """How a device's replays run and are judged: one value per device type (`replay_settings`)."""

    # Every timed call's tape is replayed and timed (GPU), or one timed call per timed trial, picked
    # with the secret, which is that trial's replay too (CPU: interpreted timings need one sample).
    every_timed_call: bool
    # The GPU target each launched specialization is compiled for where there is no GPU (None: the
    # replay itself runs on the GPU and compiles there).
    compile_target: str | None
    # One untimed launch of each kernel before the timed replays (a GPU's first launch compiles).
    warmup: bool
    # How many times each timed replay runs at most; the fastest counts, and runs stop once it is
    # under what the floor needs (ReplayItem.enough_s: the candidate's median over `time_floor`), so an
    # honest kernel costs one run. GPU: one (every timed call is replayed, and a GPU grade holds its
    # GPU alone). CPU: up to eight of the one timed call replayed per timed trial: on a machine loaded
    # by concurrent grades one interpreted run measured an honest l1/vector_add at 13.5 ms against its
    # own timed median of 1.5 ms (four grades at once on two cores; scripts/bench_floor_under_load.py).
    timed_runs: int
    # A timed call whose candidate median is below this fraction of its kernels' replayed median did
    # its work elsewhere (before the timer, outside the call) or reported a time it did not take.
    # On CPU the interpreter's replay can run an honest kernel 2x slower than its own timed call
    # (l1/index_add_rows: 43.7 ms vs 93.5 ms), so the floor there is lower; work done outside the
    # call still leaves the timed call near zero.
    time_floor: float
    # Deterministic-check repeats also for timed replays (on a GPU a timed replay is timing only).
    repeat_timed: bool
    # Timed runs of each timed replay whose seconds are the speed the grade reports (`replayed_speed`):
    # on CPU the timed trial's samples are its replay's runs, never the submission's own clock; on a
    # GPU each timed call counts as the slower of itself and its replay.
    speed_runs: int


GPU_REPLAY = ReplaySettings(every_timed_call=True, compile_target=None, warmup=True, timed_runs=1, time_floor=0.5, repeat_timed=False, speed_runs=1)
CPU_REPLAY = ReplaySettings(every_timed_call=False, compile_target=COMPILE_TARGET, warmup=False, timed_runs=8, time_floor=0.2, repeat_timed=True, speed_runs=3)
# Of an output's elements, the share torch's plumbing may have made right (copies, casts and strided views
# of inputs, where the reference computes them) before the grade is `torch_compute:plumbing`: a stray
# element an honest layout change happens to get right is no evidence, a share of the answer is.
PLUMBING_SHARE = 0.01
# Seconds of replay past which a replay that runs out the job's limit after having had longer than the
# submission's own run is judged the tape's doing, not the machine's (below it: `timeout`).
REPLAY_GRACE_S = 10.0


def replay_settings(device: torch.device) -> ReplaySettings:
    """The replay settings of `device`'s type (anything but CUDA replays as the CPU does)."""
    return GPU_REPLAY if device.type == "cuda" else CPU_REPLAY


# How a host read appears in a tape file (gym.worker.tape.OpStep.op).
HOST_READ_MARK = b'"aten::_local_scalar_dense'
# Seeds tried for fresh inputs of a call's exact layout (gym.grading.judging.replay.ReplayPhase._fresh_inputs).
FRESH_TRIES = 32
# Calls of these roles share their trial's shape and inputs: one of them per trial is replayed.
TRIAL_ROLES = frozenset({"main", "repeat", "late"})


def _input_elements(slot: ReplaySlot) -> int:
    """How many elements a slot's tensor inputs hold (how large its call is)."""
    return sum(value.numel() for value in slot.inputs.values() if isinstance(value, torch.Tensor))


def same_values(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Elementwise: equal values, NaN equal to NaN (same shape and dtype)."""
    equal = a == b
    if a.is_floating_point() or a.is_complex():
        equal |= torch.isnan(a) & torch.isnan(b)
    return equal


def _reshuffled(args: dict[str, Any], chooser: random.Random, every_tensor: bool = False) -> dict[str, Any]:
    """`args` with every floating tensor's elements in a secret order (a copy; integer and boolean
    tensors, which may set the layout, and other arguments as they are). `every_tensor`: integer and
    boolean tensors too, each in its own secret order (what a count over them gives is unchanged)."""
    generator = torch.Generator().manual_seed(chooser.getrandbits(63))
    shuffled: dict[str, Any] = {}
    for name, value in args.items():
        if isinstance(value, torch.Tensor) and (every_tensor or value.is_floating_point() or value.is_complex()) and value.numel() > 1:
            order = torch.randperm(value.numel(), generator=generator).to(value.device)
            flat = value.detach().reshape(-1)[order]
            value = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=value.device).copy_(flat.reshape(value.shape))
        shuffled[name] = value
    return shuffled


def timed_seconds(trial: Trial, ids: list[int], seconds: dict[int, float]) -> list[float]:
    """The candidate's seconds of `trial`'s timed calls (`ids`: the trial's call ids, in order) that `seconds` holds."""
    return [seconds[call_id] for plan, call_id in zip(trial.calls, ids) if plan.role == "timed" and call_id in seconds]


@dataclass
class ReplaySlot:
    """One replay: the tape of `call_id` (a call of `trial`) on fresh inputs."""

    # The number the witness answers it by.
    item: int
    trial: Trial
    # The call whose tape is replayed, and its plan.
    call_id: int
    plan: CallPlan
    # The fresh inputs, and the reference's (and oracle's) outputs on them.
    inputs: dict[str, Any]
    expected: list[torch.Tensor]
    oracle: list[torch.Tensor] | None
    # Timed: its seconds count against the call's own.
    timed: bool
    # Timed: the replay's seconds at or below which the floor holds for its trial (its timed calls'
    # median over the floor); None when the submission's records hold no times.
    enough_s: float | None = None
    # Further runs on the same inputs, for the trial's `deterministic` checks.
    repeats: int = 0
    # Counted once more, interpreted (the grade's traffic figures), and profiled (GPU).
    count: bool = False
    profile: bool = False
    # Also replayed under Nsight Compute (GPU, `profile="ncu"`).
    ncu: bool = False
    # Judged for output provenance (the replay that judges its trial's values).
    provenance: bool = False
    # Timed: the timed runs whose seconds are its trial's speed samples (None: the settings' speed_runs).
    speed_runs: int | None = None
    # A `batch_invariant` sub-batch call: the item whose fresh inputs it takes rows of (its outputs are
    # compared with those rows of that item's outputs, not with a reference).
    sub_batch_of: int | None = None
    # A task with anchors: the calls the reference makes on these inputs that are no plumbing
    # (gym.grading.planning.anchors), which are the only anchor calls the replay may make.
    reference_anchors: Counter[str] | None = None
    # Replayed on the call's own inputs (not fresh ones): its outputs must be bit for bit what the call
    # returned, or the call did not run what its tape says (`ReplayPhase._judge_own_inputs`).
    own_inputs: bool = False


@dataclass(frozen=True)
class ReplayMode:
    """How one added replay counts (the ReplaySlot fields of the same names)."""

    # Timed: its seconds count against the call's own.
    timed: bool
    # Timed: the replay's seconds at or below which its trial's floor holds; None when the records hold no times.
    enough_s: float | None = None
    # Judged for output provenance (the replay that judges its trial's values).
    provenance: bool = False
    # Timed: the timed runs whose seconds are its trial's speed samples (None: the settings' speed_runs).
    speed_runs: int | None = None


@dataclass(frozen=True)
class _Answered:
    """A replay's inputs with what the reference (and the oracle, where a check needs it) gives on them."""

    inputs: dict[str, Any]
    expected: list[torch.Tensor]
    oracle: list[torch.Tensor] | None
    # The calls the reference made that are no plumbing (a task with anchors); None otherwise.
    anchors: Counter[str] | None


@dataclass
class ReplayPhase:
    """One job's replay: the witness link (`poll`), then `judge` once the job is over."""

    task: Task
    device: torch.device
    secret: int
    layout: list[tuple[Trial, list[int]]]
    in_dir: Path
    # A trusted-side folder the replay folder is prepared in before it is moved into `in_dir`.
    staging: Path
    # Whether the submission's own records (final once its process is gone) still allow a pass:
    # when they do not, nothing is replayed (the grade fails whatever a replay would show).
    may_pass: Callable[[], bool] = lambda: True
    # The candidate's seconds by call id from those records, once `may_pass` has judged them: how fast
    # a timed replay must be for the floor to hold (the witness stops repeating it there).
    candidate_seconds: Callable[[], dict[int, float]] = dict
    # Have the witness count one public trial's replay and profile one replay (the grade's first job).
    signal: bool = False
    # With `signal`: the profiled replay also runs under Nsight Compute (GPU only).
    ncu: bool = False
    # The sandbox's memory limit: a tape whose buffers add up to more cannot be the call's (ReplayRequest.memory_bytes).
    memory_bytes: int | None = None
    # The job's output folder, where the tapes are: a tape with host reads is replayed on inputs that keep
    # the call's layout-setting values (`_fresh_inputs`).
    tapes_dir: Path | None = None
    # When the job started and when the witness said it was ready (monotonic seconds): a replay that
    # runs past the limit after having had longer than the submission's whole run is no honest timeout.
    started_at: float = field(default_factory=time.monotonic)
    ready_at: float | None = None
    slots: list[ReplaySlot] = field(default_factory=list)
    # After `judge`: the replayed seconds of each timed call (GPU) and each timed trial's speed samples
    # (CPU: its replay's runs); `replayed_speed` turns them into the timings the grade reports.
    replayed_by_call: dict[int, float] = field(default_factory=dict)
    replayed_by_trial: dict[str, list[float]] = field(default_factory=dict)
    skipped: bool = False
    out_name: str = ""
    ready: bool = False
    done: tuple[str, str] | None = None
    problem: str | None = None
    # The launched modules' sources staged for the witness, and those the kernels-file rules refused.
    sources: launched_sources.StagedSources = field(default_factory=launched_sources.StagedSources)

    @property
    def seeds(self) -> GradeSeeds:
        return GradeSeeds(self.task.id, self.secret)

    @property
    def settings(self) -> ReplaySettings:
        return replay_settings(self.device)

    def poll(self, stdout: bytes) -> None:
        for line in stdout.decode(errors="replace").splitlines():
            words = line.split()
            if len(words) < 2 or words[0] != WITNESS_PREFIX:
                continue
            if words[1] == WITNESS_READY and not self.ready:
                self.ready = True
                self.ready_at = time.monotonic()
                try:
                    self.prepare()
                except Exception as error:  # noqa: BLE001 - the gym's own failure, reported with the grade
                    self.problem = f"could not prepare the replay: {type(error).__name__}: {error}"
                    self._write(ReplayRequest(items=[], out_name=self._name()))
            elif words[1] == WITNESS_DONE and len(words) == 4 and self.ready:
                self.done = (words[2], words[3])
            elif words[1] == "unclean":
                self.problem = "processes the submission started could not be killed before the replay"

    def _name(self) -> str:
        if not self.out_name:
            self.out_name = "witness-" + secrets.token_hex(16)
        return self.out_name

    def prepare(self) -> None:
        """Pick what to replay, generate its inputs (now: the submission's process is gone) and move
        the replay folder into the job's input folder."""
        if not self.may_pass():
            self.skipped = True
            self._write(ReplayRequest(items=[], out_name=self._name()))
            return
        seconds = self.candidate_seconds()
        chooser = self.seeds.replay_choice()
        for trial, ids in self.layout:
            shared = [(plan, call_id) for plan, call_id in zip(trial.calls, ids) if plan.role in TRIAL_ROLES]
            timed = [(plan, call_id) for plan, call_id in zip(trial.calls, ids) if plan.role == "timed"]
            enough = self._enough(timed_seconds(trial, ids, seconds))
            if timed and not self.settings.every_timed_call:
                # Interpreted timings only need one sample for the floor, and a timed call's replay
                # on fresh inputs of the trial's shape is that shape's replay too.
                plan, call_id = chooser.choice(timed)
                # As many timed runs as the trial has timed calls: they are its speed samples.
                self._add(trial, plan, call_id, ReplayMode(timed=True, enough_s=enough, provenance=True, speed_runs=len(timed)))
                self._add_sub_batches(trial, ids)
                self._add_own_inputs(trial, plan, call_id)
                continue
            if shared:
                plan, call_id = chooser.choice(shared)
                self._add(trial, plan, call_id, ReplayMode(timed=False, provenance=True))
                self._add_sub_batches(trial, ids)
            for plan, call_id in timed:
                self._add(trial, plan, call_id, ReplayMode(timed=True, enough_s=enough))
            if timed:
                self._add_own_inputs(trial, *chooser.choice(timed))
        if self.signal:
            self._mark_signal()
        folder = self.staging / REPLAY_DIR
        folder.mkdir(parents=True)
        if self.tapes_dir is not None:
            # Launches from modules other than the submission's file (Helion's generated Triton), vetted now,
            # each only as the worker wrote it (its report's hashes).
            try:
                report = read_model(self.tapes_dir / REPORT_FILE, WorkerReport)
            except GradeFailure:
                report = None  # judged with the rest of the records; here: nothing the worker wrote is known
            self.sources = launched_sources.stage(self.tapes_dir, folder, report.files if report is not None else {})
        written: dict[int, Any] = {}
        items = [
            ReplayItem(
                id=slot.item,
                tape=slot.call_id,
                args=write_args(folder, f"r{slot.item}", slot.inputs, written),
                timed=slot.timed,
                enough_s=slot.enough_s,
                repeats=slot.repeats,
                count=slot.count,
                profile=slot.profile,
                ncu=slot.ncu,
                provenance=slot.provenance,
                speed_runs=min(slot.speed_runs, 64) if slot.speed_runs else None,
            )
            for slot in self.slots
        ]
        self._write(
            ReplayRequest(
                items=items,
                out_name=self._name(),
                compile_target=self.settings.compile_target,
                warmup=self.settings.warmup,
                timed_runs=self.settings.timed_runs,
                speed_runs=self.settings.speed_runs,
                memory_bytes=self.memory_bytes,
            )
        )

    def _enough(self, own: list[float]) -> float | None:
        """The replayed seconds at or below which a trial's floor holds: its timed calls' median over the floor."""
        usable = [value for value in own if math.isfinite(value) and value >= 0]
        return statistics.median(usable) / self.settings.time_floor if usable else None

    def _mark_signal(self) -> None:
        """One trial's replay is counted: a hidden one the secret picks (gym.grading.signal.training_signal.counted_slot);
        on a GPU the first timed replay (else the first public trial's) is profiled."""
        public = [slot for slot in self.slots if not slot.trial.hidden]
        counted = counted_slot([slot for slot in self.slots if slot.sub_batch_of is None], self.secret, self.task.id, size=_input_elements)
        if counted is not None:
            counted.count = True
        if self.device.type == "cuda":
            profiled = [slot for slot in self.slots if slot.timed] or public
            if profiled:
                profiled[0].profile = True
                profiled[0].ncu = self.ncu

    def _add(self, trial: Trial, plan: CallPlan, call_id: int, mode: ReplayMode) -> None:
        """A replay of `call_id`'s tape (a call of `trial`) on fresh inputs (for a call that read counts on the host, its
        own inputs in a secret order: `_host_read_inputs`), counted as `mode` says."""
        timed = mode.timed
        item = len(self.slots)
        answered = self._host_read_inputs(trial, plan, item) if self._reads_on_host(call_id) else None
        if answered is None:
            inputs = self._fresh_inputs(trial, plan, item)
            (expected, _), anchors = self._reference(inputs, trial)
            answered = _Answered(inputs, expected, self._oracle(inputs, trial), anchors)
        repeats = (
            0
            if timed and not self.settings.repeat_timed
            else max((check.runs - 1 for check in trial.checks if isinstance(check, DeterministicCheck)), default=0)
        )
        self.slots.append(
            ReplaySlot(
                item=item,
                trial=trial,
                call_id=call_id,
                plan=plan,
                inputs=answered.inputs,
                expected=answered.expected,
                oracle=answered.oracle,
                timed=timed,
                enough_s=mode.enough_s,
                repeats=repeats,
                provenance=mode.provenance,
                reference_anchors=answered.anchors,
                speed_runs=mode.speed_runs,
            )
        )

    def _oracle(self, inputs: dict[str, Any], trial: Trial) -> list[torch.Tensor] | None:
        """The oracle's outputs on `inputs`, for a trial whose checks need them (else None)."""
        return oracle_outputs(self.task, inputs, trial.shape) if trial.oracle is not None else None

    def _reference(self, inputs: dict[str, Any], trial: Trial) -> tuple[tuple[list[torch.Tensor], bool], Counter[str] | None]:
        """The reference's outputs on `inputs`; for a task with anchors, also the calls it made that are no plumbing."""
        if not self.task.spec.allowed_torch:
            return reference_outputs(self.task, inputs, trial.shape), None
        return recording_anchors(lambda: reference_outputs(self.task, inputs, trial.shape))

    def _add_own_inputs(self, trial: Trial, plan: CallPlan, call_id: int) -> None:
        """A timed trial's call replayed once more on its own inputs, to show its tape is what it ran."""
        self.slots.append(
            ReplaySlot(item=len(self.slots), trial=trial, call_id=call_id, plan=plan, inputs=plan.args, expected=[], oracle=None, timed=False, own_inputs=True)
        )

    def _add_sub_batches(self, trial: Trial, ids: list[int]) -> None:
        """For a `batch_invariant` trial: each sub-batch call's tape, replayed on rows of the fresh inputs
        of the trial's replay (the slot just added), so the check is judged on replayed calls only."""
        checks = [check for check in trial.checks if isinstance(check, BatchInvariantCheck)]
        if not checks:
            return
        judged = self.slots[-1]
        for check in checks:
            wanted = {call.span: call.args for call in check.extra_calls(judged.inputs) if call.span is not None}
            for plan, call_id in zip(trial.calls, ids):
                if plan.role != "sub_batch" or plan.span not in wanted:
                    continue
                inputs = wanted.pop(plan.span)
                self.slots.append(
                    ReplaySlot(
                        item=len(self.slots),
                        trial=trial,
                        call_id=call_id,
                        plan=plan,
                        inputs=inputs,
                        expected=[],
                        oracle=None,
                        timed=False,
                        sub_batch_of=judged.item,
                        reference_anchors=self._reference(inputs, trial)[1] if self.task.spec.allowed_torch else None,
                    )
                )

    def _reads_on_host(self, call_id: int) -> bool:
        """Whether call `call_id`'s tape says it read values on the host (`.item()` of a count a kernel
        wrote). Only the inputs' kind depends on it: the witness derives which reads are allowed, and
        a replay whose reads differ from the call's fails."""
        if self.tapes_dir is None:
            return False
        try:
            return HOST_READ_MARK in (self.tapes_dir / tape_file(call_id)).read_bytes()
        except OSError:
            return False

    def _host_read_inputs(self, trial: Trial, plan: CallPlan, item: int) -> _Answered | None:
        """For a call that read counts on the host (which sized what it did next): the call's inputs with
        every tensor's elements in a secret order (`_reshuffled(every_tensor=True)`), so a count over
        them is the call's again and the tape's sizes still fit, with the reference's outputs on them.
        None where that is no evidence and fresh inputs are used instead (the reads then differ, and
        the replay fails saying so): when the reference cannot take them, or when any one output of
        an answer to the call's own inputs would still pass the contract there (an output the shuffle
        leaves bit for bit as it was, a histogram's, or `_own_answer_passes`: one it leaves within
        rounding, a one-row log-sum-exp's, could be carried in the tape)."""
        chooser = self.seeds.host_reads(trial.label, item)
        inputs = _reshuffled(plan.args, chooser, every_tensor=True)
        try:
            (expected, _), anchors = self._reference(inputs, trial)
            (own, _), _ = self._reference(plan.args, trial)
        except Exception:  # noqa: BLE001 - inputs the reference refuses (a layout the shuffle broke)
            return None
        for new, old in zip(expected, own):
            if new.shape == old.shape and new.dtype == old.dtype and bool(same_values(new, old).all()):
                return None
        answered = _Answered(inputs, expected, self._oracle(inputs, trial), anchors)
        return None if self._own_answer_passes(trial, plan, answered, own) else answered

    def _own_answer_passes(self, trial: Trial, plan: CallPlan, shuffled: _Answered, own: list[torch.Tensor]) -> bool:
        """Whether an answer to the call's own inputs would pass, output by output, on the `shuffled`
        inputs: the reference's on the own inputs, and (for a task with an oracle) the float64 oracle's
        rounded to the output's dtype, the best answer a host could carry. Each output is tried alone
        (the others the shuffled inputs' own), so one carried output among computed ones is caught."""
        expected = shuffled.expected
        candidates = [own]
        if trial.oracle is not None:
            try:
                truth = oracle_outputs(self.task, plan.args, trial.shape)
            except Exception:  # noqa: BLE001 - the reference's answer is candidate enough
                truth = None
            if truth is not None:
                candidates.append([value.to(reference.dtype) if value.shape == reference.shape else value for value, reference in zip(truth, own)])
        judged = CallPlan(role="timed", args=shuffled.inputs, expected=expected, oracle=shuffled.oracle)
        for candidate in candidates:
            for index, output in enumerate(candidate[: len(expected)]):
                if output.shape != expected[index].shape:
                    continue
                outputs = [output if position == index else value for position, value in enumerate(expected)]
                if all(outcome.passed for outcome in judge_timed(trial, judged, outputs)):
                    return True
        return False

    def _fresh_inputs(self, trial: Trial, plan: CallPlan, item: int) -> dict[str, Any]:
        """Inputs of the call's layout (every tensor's shape and dtype, every other argument) from a
        fresh seed. A task whose input shapes depend on the data (a paged KV cache with as many
        pages as its random lengths need) gets up to FRESH_TRIES seeds to match; failing that, the
        call's own layout-setting values (integer and boolean tensors, every non-tensor argument)
        with each floating tensor's elements shuffled by a secret permutation: values the kernels
        never saw in those places, from the same distribution (`_reshuffled`)."""

        def layout(inputs: dict[str, Any]) -> list[Any]:
            return [(name, tuple(value.shape), value.dtype) if isinstance(value, torch.Tensor) else (name, value) for name, value in inputs.items()]

        wanted = layout(plan.args)
        for attempt in range(FRESH_TRIES):
            seed = self.seeds.replay_inputs(dtype_name(trial.dtype), trial.label, item * FRESH_TRIES + attempt)
            inputs = timed_inputs(self.task, trial, seed, self.device)
            if layout(inputs) == wanted:
                return inputs
        return _reshuffled(plan.args, self.seeds.reshuffle(trial.label, item))

    def _write(self, request: ReplayRequest) -> None:
        folder = self.staging / REPLAY_DIR
        folder.mkdir(parents=True, exist_ok=True)
        (folder / REPLAY_REQUEST_FILE).write_text(request.model_dump_json())
        os.chmod(folder, 0o755)
        for entry in folder.rglob("*"):
            os.chmod(entry, 0o755 if entry.is_dir() else 0o644)
        # One rename: the witness sees the whole folder or none of it.
        os.replace(folder, self.in_dir / REPLAY_DIR)

    # -- after the job ------------------------------------------------------------------------

    def report(self, out_dir: Path) -> WitnessReport | None:
        """The witness's report, when it said it was done and the file is the one it said."""
        if self.done is None or self.done[0] != self.out_name:
            return None
        path = out_dir / self.out_name / WITNESS_REPORT_FILE
        if not path.is_file() or path.is_symlink() or hashlib.sha256(path.read_bytes()).hexdigest() != self.done[1]:
            return None
        return read_model(path, WitnessReport)

    def judge(self, verdict: Verdict, out_dir: Path, timed_out: bool, allowed_extra: list[str], candidate_seconds: dict[int, float]) -> None:
        """Worsen `verdict` by what the replay shows (only a verdict that would pass needs it)."""
        if verdict.status != Status.passed:
            return
        if self.problem is not None:
            verdict.worsen(Status.infra_error, self.problem)
            return
        if self.skipped:
            flag(verdict, [Violation("replay_failed", "the submission's records changed after its process had ended")])
            return
        if self.sources.forged:
            flag(
                verdict,
                [Violation("result_channel_forgery", f"generated module sources the worker did not write: {', '.join(self.sources.forged[:8])}")],
            )
            return
        if self.sources.refused:
            # One line per distinct rule (a kernel lowered for several shapes breaks the same rule in each module).
            reasons = list(dict.fromkeys(entry.partition(": ")[2] for entry in self.sources.refused))
            count = len(self.sources.refused)
            verdict.worsen(
                Status.compile_error,
                f"the Triton your kernels were lowered to ({count} generated module{'s' if count != 1 else ''}) breaks the kernels-file "
                "rules, so the witness cannot replay it: " + "; ".join(reasons)[:2000],
            )
            return
        report = self.report(out_dir)
        if report is None:
            replay_s = time.monotonic() - self.ready_at if self.ready_at is not None else 0.0
            own_s = self.ready_at - self.started_at if self.ready_at is not None else 0.0
            if timed_out and replay_s > max(own_s, REPLAY_GRACE_S):
                # One call per trial, replayed alone, had longer than the submission's process took for every
                # call of the job: what the witness was asked to run is not what those calls ran.
                flag(
                    verdict,
                    [
                        Violation(
                            "replay_failed",
                            f"the replay of your kernels alone ran past the time limit after {replay_s:.1f} s, longer than your own "
                            f"process took for every call of the job ({own_s:.1f} s): the tapes describe work the calls did not do",
                        )
                    ],
                )
            elif timed_out:
                verdict.worsen(Status.timeout, "the replay of your kernels on fresh inputs ran past the time limit")
            else:
                # The calls ran in the submission's own process; alone, on fresh inputs, they killed the
                # witness (a wild pointer, memory a forged tape claims): no status that pays more than a rejection.
                flag(verdict, [Violation("replay_failed", "your kernels, replayed alone on fresh inputs, killed the witness before it could report")])
            return
        if report.compile_errors:
            verdict.worsen(
                Status.compile_error,
                "every @triton.jit function must compile for a GPU (checked for sm_90 without launching): " + "; ".join(report.compile_errors[:3]),
            )
            return
        if report.error is not None:
            flag(verdict, [Violation("replay_failed", report.error)])
            return
        records = {record.id: record for record in report.records}
        replayed_times: dict[str, list[float]] = {}
        for slot in self.slots:
            record = records.get(slot.item)
            if record is None:
                flag(verdict, [Violation("replay_failed", f"{slot.trial.label}: the witness did not replay the call")])
                continue
            if slot.sub_batch_of is not None:
                self._judge_sub_batch(verdict, slot, records, out_dir / self.out_name, report, allowed_extra)
                continue
            if slot.own_inputs:
                self._judge_own_inputs(verdict, slot, record, out_dir, report, allowed_extra)
                continue
            self._judge_slot(verdict, slot, record, out_dir / self.out_name, report, allowed_extra)
            if record.ok and (slot.count or slot.profile or slot.ncu):
                self._keep_figures(verdict, slot, record)
            if slot.timed and record.ok:
                if record.seconds is None or not record.seconds > 0:
                    # No time is no floor: never let a pass through on it (the gym's failure, not the submission's).
                    verdict.worsen(Status.infra_error, f"{slot.trial.label}: the witness reported no time for a timed replay ({record.seconds})")
                    continue
                replayed_times.setdefault(slot.trial.label, []).append(record.seconds)
                self.replayed_by_call[slot.call_id] = record.seconds
                self.replayed_by_trial.setdefault(slot.trial.label, []).extend(record.run_seconds or [record.seconds])
        for trial, ids in self.layout:
            replayed = replayed_times.get(trial.label)
            own = timed_seconds(trial, ids, candidate_seconds)
            if not replayed or not own:
                continue
            candidate, kernels = statistics.median(own), statistics.median(replayed)
            floor = self.settings.time_floor
            if kernels > 0 and candidate < floor * kernels:
                flag(
                    verdict,
                    [
                        Violation(
                            "timing_not_reproduced",
                            f"{trial.label}: the timed calls took {candidate * 1e6:.1f} us (median), but their own kernels replayed alone take "
                            f"{kernels * 1e6:.1f} us: the work was done outside the timed call, or the time was not what it took",
                        )
                    ],
                )

    def replayed_speed(self, timed_by_trial: dict[str, list[float]], seconds_by_call: dict[int, float]) -> dict[str, list[float]]:
        """The timed samples the grade reports, by trial label, once `judge` has run: on CPU each timed
        trial's replay runs (the submission's own clock decides nothing); on a GPU each timed call as
        the slower of its own seconds and its replay's. A trial without a replayed time keeps none."""
        speeds: dict[str, list[float]] = {}
        for trial, ids in self.layout:
            if trial.label not in timed_by_trial:
                continue
            if not self.settings.every_timed_call:
                speeds[trial.label] = list(self.replayed_by_trial.get(trial.label, []))
                continue
            timed = [call_id for plan, call_id in zip(trial.calls, ids) if plan.role == "timed"]
            speeds[trial.label] = [
                max(seconds_by_call[call_id], self.replayed_by_call[call_id])
                for call_id in timed
                if call_id in seconds_by_call and call_id in self.replayed_by_call
            ]
        return speeds

    def _keep_figures(self, verdict: Verdict, slot: ReplaySlot, record: ReplayRecord) -> None:
        figures = verdict.figures = verdict.figures or WitnessFigures()
        if slot.count:
            figures.label, figures.shape, figures.dtype = slot.trial.label, dict(slot.trial.shape), slot.trial.dtype
            figures.traffic, figures.traffic_error, figures.inputs = record.traffic, record.traffic_error, slot.inputs
        if slot.profile:
            figures.kernels, figures.launched = list(record.kernels), list(record.launched)
        if slot.ncu:
            figures.ncu = (record.ncu_memory_pct, record.ncu_compute_pct, record.ncu_note)

    def _judge_slot(self, verdict: Verdict, slot: ReplaySlot, record: ReplayRecord, folder: Path, report: WitnessReport, allowed_extra: list[str]) -> None:
        label = slot.trial.label
        violations = self._rule_violations(label, record, allowed_extra, slot.reference_anchors)
        if violations:
            flag(verdict, violations)
            return
        try:
            outputs = self._outputs(folder, record.outputs, report, len(slot.expected))
        except GradeFailure as failure:
            flag(verdict, [Violation("replay_failed", f"{label}: {failure.message}")])
            return
        plan = CallPlan(role="timed", args=slot.inputs, expected=slot.expected, oracle=slot.oracle)
        outputs = on_device_of(outputs, slot.expected)
        failed = [check for check in judge_timed(slot.trial, plan, outputs) if not check.passed]
        if not failed and slot.repeats:
            try:
                repeats = [on_device_of(self._outputs(folder, run, report, len(slot.expected)), slot.expected) for run in record.repeat_outputs]
            except GradeFailure as failure:
                flag(verdict, [Violation("replay_failed", f"{label}: {failure.message}")])
                return
            evidence = TrialEvidence(outputs=outputs, expected=slot.expected, inputs=slot.inputs, repeats=repeats)
            failed = [outcome for check in slot.trial.checks if isinstance(check, DeterministicCheck) if not (outcome := check.evaluate(evidence)).passed]
        if not failed and slot.provenance:
            try:
                made_by_torch = self._made_by_plumbing(slot, folder, record, report)
            except GradeFailure as failure:
                flag(verdict, [Violation("replay_failed", f"{label}: {failure.message}")])
                return
            if made_by_torch is not None:
                flag(verdict, [Violation("torch_compute:plumbing", f"{label}: {made_by_torch}: the result must come from your Triton kernels")])
                return
        if failed:
            # Accuse only with evidence: a miss that rounding (or float atomics' order) explains is the numeric status.
            numeric = replay_failure_status(slot.trial, failed, atomics=record.atomics)
            if numeric is not None:
                verdict.worsen(numeric.status, f"{label}: {numeric.message}\nhint: {numeric.hint}")
                return
            flag(
                verdict,
                [
                    Violation(
                        "replay_mismatch",
                        f"{label}: the kernels your call launched, replayed alone on fresh inputs of the same shape, do not give the answer "
                        f"({failed[0].kind}: {failed[0].message}): the result must come from those kernels",
                    )
                ],
            )

    def _judge_own_inputs(
        self, verdict: Verdict, slot: ReplaySlot, record: ReplayRecord, out_dir: Path, report: WitnessReport, allowed_extra: list[str]
    ) -> None:
        """The call's tape on the call's own inputs: the same rules as any replay, and the call's own
        outputs bit for bit (NaN equal to NaN). Anything else means the call did not run what its tape says
        (a launch it never made, torch compute left off the tape, a step edited after it ran)."""
        label = f"{slot.trial.label} (its own inputs)"
        violations = self._rule_violations(label, record, allowed_extra)
        if violations:
            flag(verdict, violations)
            return
        own = read_model(out_dir / call_record_file(slot.call_id), CallRecord)
        if own is None or verdict.status != Status.passed or record.atomics:
            # Kernels that used atomics (as the witness saw them run) need not repeat their bits: their order may differ.
            return
        folder = out_dir / self.out_name
        try:
            returned = read_outputs(out_dir, own.outputs)
            replayed = self._outputs(folder, record.outputs, report, min(len(own.outputs), len(record.outputs)))
        except GradeFailure as failure:
            flag(verdict, [Violation("replay_failed", f"{label}: {failure.message}")])
            return
        returned = on_device_of(returned, replayed)
        differing = [
            index
            for index, (mine, theirs) in enumerate(zip(returned, replayed))
            if mine.shape != theirs.shape or mine.dtype != theirs.dtype or not bool(same_values(mine, theirs).all())
        ]
        if differing or len(replayed) < len(returned):
            flag(
                verdict,
                [
                    Violation(
                        "replay_not_what_ran",
                        f"{label}: the tape your call recorded, replayed on that call's own inputs, does not give what the call returned "
                        f"(output #{(differing or [len(replayed)])[0] + 1}): the call did not run what its tape says",
                    )
                ],
            )

    def _judge_sub_batch(
        self, verdict: Verdict, slot: ReplaySlot, records: dict[int, ReplayRecord], folder: Path, report: WitnessReport, allowed_extra: list[str]
    ) -> None:
        """A replayed sub-batch call: the same rules as any replayed call, then its rows against the
        same rows of its trial's replayed full batch (the `batch_invariant` checks)."""
        record, whole = records[slot.item], records.get(slot.sub_batch_of if slot.sub_batch_of is not None else -1)
        label = f"{slot.trial.label} rows {slot.plan.span}"
        violations = self._rule_violations(label, record, allowed_extra, slot.reference_anchors)
        if violations:
            flag(verdict, violations)
            return
        if whole is None or not whole.ok or verdict.status != Status.passed:
            return
        full = next(candidate for candidate in self.slots if candidate.item == slot.sub_batch_of)
        count = len(full.expected)
        try:
            outputs = on_device_of(self._outputs(folder, whole.outputs, report, count), full.expected)
            rows = on_device_of(self._outputs(folder, record.outputs, report, count), full.expected)
        except GradeFailure as failure:
            flag(verdict, [Violation("replay_failed", f"{label}: {failure.message}")])
            return
        assert slot.plan.span is not None
        evidence = TrialEvidence(outputs=outputs, expected=full.expected, inputs=full.inputs, sub_batches=[SubBatchRun(*slot.plan.span, outputs=rows)])
        failed = [outcome for check in slot.trial.checks if isinstance(check, BatchInvariantCheck) if not (outcome := check.evaluate(evidence)).passed]
        if failed:
            flag(
                verdict,
                [
                    Violation(
                        "replay_mismatch",
                        f"{label}: your kernels, replayed alone on fresh inputs, give these rows differently alone and in the full batch "
                        f"({failed[0].kind}: {failed[0].message})",
                    )
                ],
            )

    def _rule_violations(self, label: str, record: ReplayRecord, allowed_extra: list[str], anchors: Counter[str] | None = None) -> list[Violation]:
        """What a replayed call breaks, whatever its values: it could not be replayed, torch computed
        (an op the task does not allow, or an anchor called otherwise than the reference calls it),
        nothing launched, an input was written."""
        if not record.ok:
            return [Violation("replay_failed", f"{label}: the call's launches could not be replayed on their own: {record.error}")]
        violations = [
            Violation(
                f"torch_compute:{op}",
                f"{label}: the call's own record of what it ran includes torch's {op}: the result must come from your Triton kernels",
            )
            for op in forbidden(record.ops, allowed_extra)
            if op not in TRIPWIRES
        ]
        if anchors is not None and not violations:
            unmatched = unmatched_anchor_calls(record.anchor_calls, anchors)
            if unmatched:
                made = ", ".join(sorted(anchors)[:3]) or "none"
                violations.append(
                    Violation(
                        "torch_compute:anchor_call",
                        f"{label}: your call {unmatched[0][:300]} is not a call the reference makes (an anchor may stay in torch only exactly "
                        f"as the reference calls it: same overload, arguments and shapes; the reference makes {made[:600]})",
                    )
                )
        if record.launches == 0:
            violations.append(Violation("no_triton_launch", f"{label}: the call's record of what it ran holds no Triton launch"))
        violations += [Violation(f"input_mutated:{name}", f"{label}: the replayed kernels wrote to the input {name!r}") for name in record.inputs_mutated]
        return violations

    def _made_by_plumbing(self, slot: ReplaySlot, folder: Path, record: ReplayRecord, report: WitnessReport) -> str | None:
        """Why the answer came from torch's plumbing rather than the kernels (None when it did not):
        the outputs torch alone leaves already give the answer, or more than PLUMBING_SHARE of an
        output's elements are values torch's copies, casts or strided views made that equal the answer."""
        count = len(slot.expected)
        if len(record.provenance_outputs) < count or len(record.provenance_masks) < count:
            raise GradeFailure(Status.runtime_error, "the witness did not say where the replay's outputs came from")
        alone = on_device_of(self._outputs(folder, record.provenance_outputs, report, count), slot.expected)
        masks = on_device_of(self._outputs(folder, record.provenance_masks, report, count), slot.expected)
        plan = CallPlan(role="timed", args=slot.inputs, expected=slot.expected, oracle=slot.oracle)
        try:
            already = all(check.passed for check in judge_timed(slot.trial, plan, alone))
        except Exception:  # noqa: BLE001 - values a check cannot even compare are not the answer
            already = False
        if already:
            return "the tape's torch ops alone, with every Triton launch left out, already give the answer"
        for index, (value, mask, expected) in enumerate(zip(alone, masks, slot.expected)):
            if value.shape != expected.shape or value.dtype != expected.dtype or mask.shape != expected.shape or mask.dtype != torch.bool:
                continue
            total = expected.numel()
            right = mask & same_values(value, expected)
            share = int(right.sum()) / total if total else 0.0
            if share > PLUMBING_SHARE:
                return (
                    f"{share:.1%} of output #{index + 1}'s elements are values torch's copies, casts or strided views made, "
                    "and they are the answer there (torch may allocate, fill and copy a whole input to initialise an output, not move data into place)"
                )
        return None

    def _outputs(self, folder: Path, records: list[OutputRecord], report: WitnessReport, count: int) -> list[torch.Tensor]:
        if len(records) < count:
            raise GradeFailure(Status.runtime_error, f"the replay returned {len(records)} tensors, the task returns {count}")
        for output in records[:count]:
            if output.data is None or report.files.get(output.data.file) != hashlib.sha256((folder / output.data.file).read_bytes()).hexdigest():
                raise GradeFailure(Status.runtime_error, "a replay output is not the file the witness wrote")
        return read_outputs(folder, records[:count])

    def cleanup(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

"""What crosses between the trusted side and the witness (`gym.worker.witness`).

The witness is the worker's first process. It forks the process that runs the
submission, waits until that process and everything it started are gone, and only
then tells the trusted side on its private standard output (nothing else in the
sandbox can write there) that it is ready. The trusted side then moves the replay
folder into the job's input folder: which call's tape to replay on which fresh
inputs (generated only now, never seen by the submission), and the secret name
of the folder the witness writes into. The witness replays, writes its report
there and says on its private output which folder and which sha256; the grader
reads nothing the submission could have written in its place.
"""

from __future__ import annotations

from pydantic import Field

from .protocol import MAX_TEXT, Arg, OutputRecord, WireModel
from .traffic import TrafficCounts

# The replay folder inside the job's input folder, moved there whole once the witness is ready.
REPLAY_DIR = "replay"
# Its request.
REPLAY_REQUEST_FILE = "request.json"
# The jit functions and constants of the submission, extracted by the trusted side (gym.grading.intake.kernel_source).
KERNELS_FILE = "kernels.py"
# The witness's report inside its output folder.
WITNESS_REPORT_FILE = "witness.json"
# Lines the witness writes on its private standard output.
WITNESS_PREFIX = "kgym-witness"
WITNESS_READY = "ready"
WITNESS_DONE = "done"
# How often the witness looks for the replay folder, seconds.
REPLAY_POLL_S = 0.005
# The GPU target kernels are compiled for on a CPU-only machine (every jit function must be real Triton).
COMPILE_TARGET = "cuda:90"


def witness_line(*words: str) -> bytes:
    return (" ".join((WITNESS_PREFIX, *words)) + "\n").encode()


class ReplayItem(WireModel):
    id: int = Field(ge=0, description="The item's number (its outputs are r<id>_out<k>.bin).")
    tape: int = Field(ge=0, description="The call whose tape is replayed (its tape file in the output folder).")
    args: list[Arg] = Field(description="Fresh inputs for the call's parameters (files in the replay folder), in the call's order.")
    timed: bool = Field(default=False, description="Time the replay (the tape's ops and launches; ReplayRequest.timed_runs at most).")
    enough_s: float | None = Field(
        default=None,
        ge=0,
        description=(
            "Timed items: stop repeating the timed run once the fastest is at or below this many seconds (the time floor then "
            "holds for the call); None: every one of ReplayRequest.timed_runs."
        ),
    )
    repeats: int = Field(default=0, ge=0, le=20, description="Replay this many more times on the same inputs (a `deterministic` contract).")
    count: bool = Field(
        default=False, description="Replay once more, interpreted on the CPU, counting the launches' memory traffic and FLOPs (gym.worker.traffic)."
    )
    profile: bool = Field(default=False, description="GPU: replay once more, untimed, under torch.profiler (the device kernels and their times).")
    ncu: bool = Field(default=False, description="GPU: replay once more in a child process under Nsight Compute's SpeedOfLight section (gym.worker.ncu).")
    speed_runs: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="Timed items: timed runs at least (their seconds are the speed the grade reports); None: ReplayRequest.speed_runs.",
    )
    provenance: bool = Field(
        default=False,
        description="Run the tape's ops twice more without its launches (gym.worker.tape_replay.TapeReplay.provenance): the outputs torch alone leaves, and which elements torch's plumbing made.",
    )


class ReplayRequest(WireModel):
    items: list[ReplayItem] = Field(description="What to replay, in order.")
    out_name: str = Field(
        pattern=r"^[A-Za-z0-9_\-]{8,100}$",
        description="The folder the witness creates in the output folder for its report and outputs (secret until now).",
    )
    compile_target: str | None = Field(
        default=COMPILE_TARGET,
        description='Compile every launched specialization for this GPU target ("cuda:<capability>") before replaying; None on a GPU, where the replay compiles for the real device.',
    )
    warmup: bool = Field(default=False, description="Run each timed item once untimed first (a GPU compiles there).")
    timed_runs: int = Field(
        default=1,
        ge=1,
        le=10,
        description=(
            "Timed runs of each timed item at most (fewer once ReplayItem.enough_s is reached); its seconds are the fastest "
            "(a run on a machine loaded by other grades is slowed by them, and the floor must not fail an honest kernel)."
        ),
    )
    memory_bytes: int | None = Field(
        default=None,
        ge=0,
        description="The sandbox's memory limit: a tape whose buffers add up to more cannot be the call's (every buffer a tape names was alive at once in the call).",
    )
    speed_runs: int = Field(
        default=1,
        ge=1,
        le=10,
        description="Timed runs of each timed item at least, whatever ReplayItem.enough_s says: their seconds (ReplayRecord.run_seconds) are the speed the grade reports.",
    )


class KernelRun(WireModel):
    name: str = Field(max_length=2000, description="The device kernel's name as torch.profiler reports it.")
    calls: int = Field(ge=0, description="Times it ran in the profiled replay.")
    device_us: float = Field(ge=0, description="Its total device time, microseconds.")


class ReplayRecord(WireModel):
    id: int = Field(ge=0, description="The ReplayItem this answers.")
    ok: bool = Field(description="False when the tape could not be replayed (the error says why).")
    error: str | None = Field(default=None, max_length=MAX_TEXT, description="Why the replay failed.")
    outputs: list[OutputRecord] = Field(default_factory=list, max_length=64, description="The replayed call's outputs.")
    repeat_outputs: list[list[OutputRecord]] = Field(
        default_factory=list, max_length=20, description="The outputs of each further run on the same inputs (ReplayItem.repeats)."
    )
    seconds: float | None = Field(default=None, description="Timed items: seconds of the replay's fastest timed run.")
    timed_runs: int = Field(default=0, ge=0, description="Timed items: the timed runs made (fewer than asked once ReplayItem.enough_s was reached).")
    run_seconds: list[float] = Field(default_factory=list, max_length=10, description="Timed items: the seconds of every timed run, in order.")
    provenance_outputs: list[OutputRecord] = Field(
        default_factory=list, max_length=64, description="ReplayItem.provenance: the call's outputs as the tape's ops leave them without any launch."
    )
    provenance_masks: list[OutputRecord] = Field(
        default_factory=list, max_length=64, description="ReplayItem.provenance: for each output, the elements torch's plumbing made (bool)."
    )
    ops: dict[str, int] = Field(
        default_factory=dict, description="The replayed aten ops by packet name, derived from each step's overload (what the torch policy judges)."
    )
    atomics: bool = Field(
        default=False,
        description="Whether the replay's kernels used atomics, as the witness saw them run (CPU: the interpreter executed one; GPU: the launched code names one).",
    )
    anchor_calls: list[str] = Field(
        default_factory=list,
        max_length=4096,
        description="Each replayed op with an effect that is no plumbing (a task's anchor), as gym.worker.tape.call_signature describes it.",
    )
    launches: int = Field(default=0, ge=0, description="Triton launches replayed.")
    inputs_mutated: list[str] = Field(default_factory=list, description="Inputs the replayed steps wrote to.")
    traffic: TrafficCounts | None = Field(default=None, description="ReplayItem.count: what the counted replay's launches moved and computed.")
    traffic_error: str | None = Field(default=None, max_length=MAX_TEXT, description="Why the counted replay failed (the grade then has no traffic figures).")
    kernels: list[KernelRun] = Field(default_factory=list, max_length=256, description="ReplayItem.profile: the device kernels of the profiled replay.")
    launched: list[str] = Field(default_factory=list, max_length=256, description="The jit functions the tape launches (names as the profiler shows them).")
    ncu_memory_pct: float | None = Field(
        default=None, description="ReplayItem.ncu: memory throughput, % of peak, duration-weighted over the candidate's kernels."
    )
    ncu_compute_pct: float | None = Field(
        default=None, description="ReplayItem.ncu: compute (SM) throughput, % of peak, duration-weighted over the candidate's kernels."
    )
    ncu_note: str | None = Field(
        default=None, max_length=MAX_TEXT, description="ReplayItem.ncu: why there are no ncu figures (ncu missing, counters not permitted, ...)."
    )


class WitnessReport(WireModel):
    submission_exit: int = Field(description="Exit status of the submission's process (negative: killed by that signal).")
    compile_errors: list[str] = Field(
        default_factory=list, max_length=64, description="Launched kernels that do not compile for the GPU target, with Triton's message."
    )
    error: str | None = Field(default=None, max_length=MAX_TEXT, description="A failure of the replay as a whole (the kernels file did not load).")
    records: list[ReplayRecord] = Field(default_factory=list, description="One per replayed item.")
    files: dict[str, str] = Field(default_factory=dict, description="sha256 of every output file the witness wrote, by name.")

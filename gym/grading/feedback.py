"""Feedback text for an agent: what failed, where, and what usually causes it."""

from __future__ import annotations

from gym.contracts import CheckOutcome, Diagnostics
from gym.schema.result import GradeResult, Status, Timings, TrialResult

MAX_TRIALS_DESCRIBED = 2
MAX_ERROR_LINES = 25

# Imported KernelBench tasks (ids under kb/) take either submission format.
KERNELBENCH_COMPILE_HINT = (
    "The submission must be one Python file that imports cleanly and defines `kernel(...)` with the task's parameters or "
    "KernelBench's `class ModelNew(nn.Module)` with Model's constructor and the same parameter and buffer names "
    "(they are loaded by state_dict name); check syntax, imports and the names of Triton functions."
)

STATUS_HINTS: dict[Status, str] = {
    Status.compile_error: (
        "The submission must be one Python file that imports cleanly and defines `kernel(...)` with the task's "
        "parameters; check syntax, imports and the names of Triton functions."
    ),
    Status.runtime_error: (
        "Common causes: a pointer offset past the end of a tensor (mask every load and store), a grid of the wrong "
        "rank, passing a torch dtype where Triton wants a constexpr, or an exception in the Python launch code."
    ),
    Status.timeout: (
        "The kernel did not finish in time. Look for a loop whose bound never advances, a grid far larger than "
        "the problem, or a block size that makes every program do the whole problem."
    ),
    Status.rejected: (
        "The grade was rejected for an integrity rule, not for a numeric error: inputs are read-only and the "
        "result must be plain torch.Tensor objects computed by your Triton kernels."
    ),
    Status.infra_error: "This failure is the gym's, not your submission's; retrying or reporting it is the right move.",
}


def _hint(check: CheckOutcome, diagnostics: list[Diagnostics]) -> str | None:
    patterns = " ".join(d.pattern or "" for d in diagnostics)
    if check.kind == "deterministic":
        return "Results differ between identical runs: avoid atomics and any order that depends on scheduling; reduce in a fixed order."
    if check.kind == "batch_invariant":
        return "A row's result changed with the batch around it: keep the reduction order (block sizes, split-K) independent of the batch size."
    if "tail" in patterns or "last" in patterns:
        return "This looks like the tail of a dimension: compute masks as `offs < n` for every load and store and launch `triton.cdiv(n, BLOCK)` programs."
    if "zero" in patterns:
        return "Elements were never written: check that the grid covers every output element and that stores are not masked off."
    if "NaN" in patterns or any(d.nan_mismatch for d in diagnostics):
        return "NaN where the reference is finite: masked loads need a safe `other=` value, and exp() needs the row max subtracted first."
    if any(d.inf_mismatch for d in diagnostics):
        return "Inf where the reference is finite (or the reverse): look for overflow in an intermediate; compute it in float32."
    worst_rel = max((d.max_rel_error or 0.0) for d in diagnostics) if diagnostics else 0.0
    if check.kind in {"allclose", "ulp", "normwise", "oracle", "logprob"} and 0 < worst_rel < 1e-2:
        return "The errors are small but over the bound: accumulate in float32, avoid lower-precision intermediates, and for tl.dot on float32 pass input_precision='ieee'."
    return None


def _describe_trial(trial: TrialResult) -> list[str]:
    where = f"{trial.label}" + ("" if trial.hidden or trial.shape is None else f" with shape {trial.shape}")
    if trial.hidden:
        where += " (a hidden shape: it differs from the public ones)"
    lines = []
    if trial.error:
        lines.append(f"- {where}: {trial.error}")
        return lines
    for check in trial.checks:
        if check.passed:
            continue
        lines.append(f"- {where}: `{check.kind}` failed: {check.message}")
        for diagnostics in check.diagnostics:
            if diagnostics.mismatched == 0:
                continue
            lines.append(
                f"  output {diagnostics.output}: {diagnostics.mismatched}/{diagnostics.elements} elements wrong"
                + (f", {diagnostics.nan_mismatch} NaN mismatches" if diagnostics.nan_mismatch else "")
                + (f", {diagnostics.inf_mismatch} Inf mismatches" if diagnostics.inf_mismatch else "")
                + (f", max abs error {diagnostics.max_abs_error:.3g}" if diagnostics.max_abs_error is not None else "")
            )
            for worst in diagnostics.worst[:3]:
                lines.append(f"    at {worst.index}: got {worst.got:.6g}, expected {worst.expected:.6g}")
            if diagnostics.pattern:
                lines.append(f"    pattern: {diagnostics.pattern}")
        hint = _hint(check, check.diagnostics)
        if hint:
            lines.append(f"  hint: {hint}")
    return lines


def _baseline(timings: Timings) -> str:
    """The timing sentence's "; baseline: measured" or "; baseline: cached <date>" (timed now, or reused from the cache)."""
    return f"; baseline: {timings.baseline}" if timings.baseline else ""


def _size(nbytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def _times(count: float) -> str:
    return "once" if abs(count - 1) < 0.05 else f"{count:.3g} times"


def signal_feedback(result: GradeResult) -> list[str]:
    """What the traffic model and the profiler saw, in sentences an agent can act on."""
    lines: list[str] = []
    traffic, modelled = result.traffic, result.modelled
    if traffic is not None:
        moved = traffic.bytes_read + traffic.bytes_written
        where = f"{traffic.trial} {traffic.shape}"
        head = f"Traffic (counted in a replay of your kernels alone, {where}): {traffic.launches} launch(es), {_size(moved)} moved"
        if traffic.traffic_ratio is not None and traffic.min_bytes:
            head += f", {traffic.traffic_ratio:.2f}x the minimum {_size(traffic.min_bytes)}"
        parts = [f"`{row.name}` read {_times(row.times_read)}" for row in traffic.buffers if row.bytes_read and not row.name.startswith("scratch")]
        parts += [f"`{row.name}` written {_times(row.times_written)}" for row in traffic.buffers if row.bytes_written and not row.name.startswith("scratch")]
        scratch = [row for row in traffic.buffers if row.name.startswith("scratch")]
        if scratch:
            parts.append(
                f"{len(scratch)} scratch buffer(s): {_size(sum(row.bytes_written for row in scratch))} written, {_size(sum(row.bytes_read for row in scratch))} read back"
            )
        lines.append(head + (": " + ", ".join(parts) if parts else "") + ".")
        if traffic.min_flops and traffic.flops > 1.5 * traffic.min_flops:
            lines.append(
                f"Your kernels do {traffic.flops / traffic.min_flops:.2f}x the minimum FLOPs ({traffic.flops:,} vs {traffic.min_flops:,.0f}): masked tile padding or recomputation."
            )
        if traffic.torch_ops:
            ops = sorted({row.kernel for row in traffic.per_launch if row.torch_op})
            lines.append(f"{traffic.torch_ops} torch op(s) ran beside your launches ({', '.join(ops[:5])}); each is modelled as a launch of its own.")
    if modelled is not None:
        speeds = []
        if modelled.speedup_vs_eager is not None:
            speeds.append(f"{modelled.speedup_vs_eager:.2f}x vs eager")
        if modelled.speedup_vs_compile is not None:
            speeds.append(f"{modelled.speedup_vs_compile:.2f}x vs torch.compile")
        line = f"Modelled on {modelled.profile} at {modelled.shape}, not measured: {modelled.candidate_s * 1e6:.3g} us"
        line += (" (" + ", ".join(speeds) + ")" if speeds else "") + f", {modelled.bound}-bound."
        lines.append(line)
        if modelled.launch_overhead_share >= 0.5 and traffic is not None and traffic.launches > 1:
            output = sum(row.bytes for row in traffic.buffers if row.name.startswith("output"))
            lines.append(
                f"{modelled.launch_overhead_share:.0%} of modelled time is launch overhead: {traffic.launches} launches for {_size(output)} of output at the counted shape; fuse them."
            )
    profile = result.profile
    if profile is not None and profile.kernels:
        total = sum(kernel.device_us for kernel in profile.kernels)
        slowest = profile.kernels[0]
        share = f"Triton kernels took {result.triton_time_share:.0%} of the profiled call's device time; " if result.triton_time_share is not None else ""
        lines.append(
            f"Profile ({profile.tool}, one untimed replay): {share}{len(profile.kernels)} device kernel(s), {total:.3g} us in all; slowest {slowest.name} ({slowest.device_us:.3g} us)."
        )
    if profile is not None and profile.note:
        lines.append(f"Profile: {profile.note}")
    if profile is not None and profile.memory_throughput_pct is not None:
        lines.append(
            f"Nsight Compute: memory throughput {profile.memory_throughput_pct:.0f}% of peak, compute {profile.compute_throughput_pct or 0:.0f}% of peak."
        )
    return lines


# Frames of a traceback that are the gym's or a library's, not the submission's (`trimmed_traceback`).
_LIBRARY_FRAMES = ("/gym/worker/", "/site-packages/", "/dist-packages/", "<frozen ", "/lib/python3")


def trimmed_traceback(text: str) -> str:
    """`text` (a worker's error: tracebacks and their messages) with every frame that is the gym's or a
    library's left out: what remains is the submission's own lines and each exception's message
    (Triton's compile errors keep their source excerpt). Text that is no traceback is returned as is."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if line.startswith("  File "):
            skipping = any(marker in line for marker in _LIBRARY_FRAMES)
            if not skipping:
                kept.append(line)
            continue
        if skipping and line.startswith("    ") and not stripped.startswith("File "):
            continue
        skipping = False
        kept.append(line)
    return "\n".join(kept)


def write_feedback(result: GradeResult, human: bool = False) -> str:
    """Plain text an agent can act on. `human` (the CLI's table view, never the result's `feedback`):
    the error's traceback trimmed to the submission's frames, and interpreted timings without a ratio."""
    if result.status == Status.passed:
        text = f"Passed: every check held on all {len(result.trials)} trials."
        timings = result.timings
        if human and timings and timings.interpreted and timings.candidate and timings.reference:
            text += (
                f" Timing interpreted (not a speed): your kernel {timings.candidate.median_s * 1e3:.3g} ms and the reference "
                f"{timings.reference.median_s * 1e3:.3g} ms under the Triton interpreter on CPU; grade on a GPU to measure speed."
            )
        elif timings and timings.candidate and timings.reference and result.speedup_vs_eager:
            mode = "interpreted on CPU (not comparable with GPU timings)" if timings.interpreted else f"on {timings.device}"
            if len(timings.shapes) > 1:
                per_shape = "; ".join(
                    f"{entry.shape}: {entry.candidate.median_s * 1e3:.3g} ms vs {entry.reference.median_s * 1e3:.3g} ms"
                    for entry in timings.shapes
                    if entry.candidate and entry.reference
                )
                text += f" Timing {mode}, your kernel vs reference per shape: {per_shape} (speedup, geometric mean: {result.speedup_vs_eager:.2f}x{_baseline(timings)})."
            else:
                text += (
                    f" Timing {mode}: your kernel {timings.candidate.median_s * 1e3:.3g} ms vs reference "
                    f"{timings.reference.median_s * 1e3:.3g} ms (speedup {result.speedup_vs_eager:.2f}x{_baseline(timings)})."
                )
        return "\n".join([text, *signal_feedback(result)])
    lines = [f"Status: {result.status.value}."]
    failing = [trial for trial in result.trials if not trial.passed]
    for trial in failing[:MAX_TRIALS_DESCRIBED]:
        lines.extend(_describe_trial(trial))
    if len(failing) > MAX_TRIALS_DESCRIBED:
        lines.append(f"- ... and {len(failing) - MAX_TRIALS_DESCRIBED} more failing trial(s).")
    if result.error and result.status != Status.wrong_answer:
        error_lines = (trimmed_traceback(result.error) if human else result.error).strip().splitlines()
        lines.append("Error:")
        lines.extend("  " + line for line in error_lines[-MAX_ERROR_LINES:])
    if result.integrity_flags:
        lines.append("Integrity flags: " + ", ".join(result.integrity_flags))
    if result.status == Status.compile_error and result.task_id.startswith("kb/"):
        lines.append(KERNELBENCH_COMPILE_HINT)
    elif result.status in STATUS_HINTS:
        lines.append(STATUS_HINTS[result.status])
    if result.status == Status.wrong_answer and not failing and result.error:
        lines.append(result.error)
    return "\n".join(lines)

"""GPU check: grade every shipped solution with timings on its benchmark shapes, compare the gym's timer with triton.testing.do_bench.

    python scripts/gpu_check.py [--out gpu-check] [--budget-s 480] [--grade-budget-s 90] [--tasks l1/a,l1/b] [--sandbox auto]
    python scripts/gpu_check.py --selftest      # the same flow on CPU: three tasks, small budgets, the process fallback

Normally started by scripts/gpu_check.sh, which installs the wheelhouse into a
private folder first (a lent GPU box has torch and Triton but no pydantic).
Installs nothing itself.

Report: OUT/gpu_check.jsonl, one JSON object a line, written and flushed as
each row is known (a kill loses only the row in flight): a `run` row (device,
versions, the sandbox backend and why, the non-stdlib modules the grader and
the worker import), one `task` row per task (status, sandbox, per-shape
timings, do_bench) and an `end` row. OUT/gpu_check.txt holds the summary
printed at the end.

Budgets: the whole check keeps to --budget-s; each task runs in a child
process stopped after --grade-budget-s (or what is left of the total); a task
is started only with --min-start-s of the total left, the rest are reported
as skipped. `--sandbox auto` uses bwrap when it is installed and a probe grade
under it passes, otherwise the process backend (not isolated), and says so in
every row.

This parent process imports only the standard library; the children import
torch and the gym (`--child probe|task`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
SELFTEST_TASKS = ("l1/vector_add", "l1/row_sum", "l1/softmax")
REPORT_FILE = "gpu_check.jsonl"
SUMMARY_FILE = "gpu_check.txt"
PROBE_TASK = "l1/vector_add"
# The check's clock (a test replaces it).
clock = time.monotonic
# Statuses of rows the check itself writes (a grade's statuses are gym.schema.result.Status).
SKIPPED, KILLED, CHECK_ERROR = "skipped", "killed", "check_error"


# ----------------------------------------------------------------------------------------------
# Child side: imports torch and the gym.
# ----------------------------------------------------------------------------------------------

WORKER_TRACE = """
import json, sys
import gym.worker.__main__, gym.worker.interpreter.shim  # what `python -m gym.worker` imports before the submission
import triton, triton.language  # what a submission imports
found = {}
for name in sorted({module.split(".")[0] for module in sys.modules}):
    if name not in sys.stdlib_module_names and not name.startswith(("__", "_sysconfigdata")):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", [])), None)
        found[name] = str(path) if path else None
print(json.dumps(found))
"""


def non_stdlib_modules() -> dict[str, str | None]:
    """Top-level modules loaded in this process that are not the standard library's, with where each came from."""
    found: dict[str, str | None] = {}
    for name in sorted({module.split(".")[0] for module in list(sys.modules)}):
        if name in sys.stdlib_module_names or name.startswith(("__", "_sysconfigdata")):
            continue
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", [])), None)
        found[name] = str(path) if path else None
    return found


def trace_worker(device: str) -> dict[str, Any]:
    """Import the staged worker the way the process backend starts it (same interpreter, environment, PYTHONPATH)."""
    from gym.sandbox.environment import runtime_python, worker_environment
    from gym.sandbox.staging import stage_worker

    python = runtime_python()
    python = python if python.exists() else Path(sys.executable)
    with tempfile.TemporaryDirectory(prefix="kgym-gpu-check-") as tmp:
        lib = stage_worker(Path(tmp) / "lib")
        home = Path(tmp) / "home"
        home.mkdir()
        env = worker_environment(device, str(home), str(home), str(lib))
        done = subprocess.run([str(python), "-P", "-c", WORKER_TRACE], env=env, cwd=home, capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        return {"python": str(python), "error": done.stderr[-1500:]}
    return {"python": str(python), "modules": json.loads(done.stdout.strip().splitlines()[-1])}


def bench_default() -> tuple[bool, Any]:
    """Whether GradeOptions has `bench`, and its default."""
    from gym.grading.options import GradeOptions

    field = GradeOptions.model_fields.get("bench")
    return field is not None, (field.default if field is not None else None)


def grade_kwargs(device: str) -> dict[str, Any]:
    """`bench` for grade(): newer grades time the bench shapes on CUDA by default (bench=None); older ones need bench=True."""
    takes, default = bench_default()
    return {"bench": device == "cuda"} if takes and default is not None else {}


def pick_sandbox(config: dict[str, Any]) -> tuple[str, str | None]:
    """The backend to grade with and, when it is not bwrap, why (a note every row carries)."""
    choice = config["sandbox"]
    if choice != "auto":
        return choice, ("process backend, NOT isolated: chosen with --sandbox process" if choice == "process" else None)
    if config["no_bwrap"]:
        reason = "bwrap not tried (--no-bwrap; the selftest proves the fallback a box without bubblewrap takes)"
    else:
        from gym.grading.grader import grade
        from gym.grading.options import GradeOptions
        from gym.grading.timing.timing_policy import TimingPolicy
        from gym.sandbox import available_sandboxes
        from gym.tasks.loader import find_task

        problem = available_sandboxes()["bwrap"].check()
        if problem is None:
            task = find_task(PROBE_TASK)
            policy = TimingPolicy(min_reps=1, max_reps=1, budget_s=0.0)
            kwargs: dict[str, Any] = {"bench": False} if bench_default()[0] else {}
            result = grade(task, task.solution_path, GradeOptions(sandbox="bwrap", timing=policy, timing_reps=0, **kwargs), device=config["device"])
            if result.status.value == "passed":
                return "bwrap", None
            problem = f"a probe grade of {PROBE_TASK} under bwrap ended {result.status.value}: {(result.error or '')[:300]}"
        reason = problem
    return "process", "process backend, NOT isolated: " + " ".join(reason.split())


def child_probe(config: dict[str, Any]) -> dict[str, Any]:
    """Versions, device, task ids, the modules the grader and the worker import, and the sandbox to use."""
    sys.path.insert(0, str(ROOT))
    import importlib.util

    import gym.grading.grader
    import gym.grading.timing.timing_policy
    import gym.sandbox
    import gym.tasks.loader

    grader_modules = non_stdlib_modules()
    import torch
    import triton

    cuda = torch.cuda.is_available()
    config["device"] = "cpu" if config["cpu"] or not cuda else "cuda"
    row: dict[str, Any] = {
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "triton": triton.__version__,
        "cuda_available": cuda,
        "device": config["device"],
        "gpu": torch.cuda.get_device_name() if cuda else None,
        "driver": getattr(gym.grading.grader, "driver_version", lambda: None)() if cuda else None,
        "tasks": [task.id for task in gym.tasks.loader.discover().tasks],
        # Tasks shipping a Helion solution, and whether Helion is importable here (--dsl helion).
        "helion_tasks": [task.id for task in gym.tasks.loader.discover().tasks if task.solution_for("helion").is_file()],
        "helion": importlib.util.find_spec("helion") is not None,
        "grader_modules": grader_modules,
    }
    if config["device"] != "cuda" and not config["cpu"]:
        return row
    row["worker_import_trace"] = trace_worker(config["device"])
    sandbox, note = pick_sandbox(config)
    row["sandbox"], row["sandbox_note"] = sandbox, note
    row["isolated"] = bool(getattr(gym.sandbox.get_sandbox(sandbox), "isolated", False))
    return row


def summary_figures(summary: Any) -> dict[str, Any] | None:
    if summary is None:
        return None
    return {"median_ms": summary.median_s * 1e3, "rse": summary.rse, "reps": summary.reps}


LABEL = re.compile(r"^\S+ (public|hidden|bench) #(\d+)$")


def shape_of_label(task: Any, label: str | None) -> dict[str, int] | None:
    """The shape a trial label such as "float32 bench #1" names (older grades did not record it)."""
    match = LABEL.match(label or "")
    if match is None or match.group(1) == "hidden":
        return None
    shapes = getattr(task.spec.shapes, match.group(1))
    index = int(match.group(2)) - 1
    return dict(shapes[index]) if index < len(shapes) else None


def shape_entries(task: Any, result: Any) -> list[dict[str, Any]]:
    """Per-shape timings: `timings.shapes` when the grade has them, else the one timed trial's top-level figures."""
    timings = result.timings
    if timings is None:
        return []
    shapes = getattr(timings, "shapes", None)
    if shapes:
        return [
            {
                "trial": entry.trial,
                "shape": dict(entry.shape) if getattr(entry, "shape", None) else shape_of_label(task, entry.trial),
                "candidate": summary_figures(entry.candidate),
                "reference": summary_figures(entry.reference),
                "compiled": summary_figures(entry.compiled),
                "speedup_vs_eager": entry.speedup_vs_eager,
                "speedup_vs_compile": entry.speedup_vs_compile,
                "sol_fraction": entry.sol_fraction,
                "stop_reason": getattr(entry, "stop_reason", None),
                "compiled_note": getattr(entry, "compiled_note", None),
            }
            for entry in shapes
        ]
    return [
        {
            "trial": timings.trial,
            "shape": shape_of_label(task, timings.trial),
            "candidate": summary_figures(timings.candidate),
            "reference": summary_figures(timings.reference),
            "compiled": summary_figures(timings.compiled),
            "speedup_vs_eager": result.speedup_vs_eager,
            "speedup_vs_compile": result.speedup_vs_compile,
            "sol_fraction": result.sol_fraction,
            "stop_reason": timings.stop_reason,
            "compiled_note": getattr(timings, "compiled_note", None),
        }
    ]


def comparison_shape(task: Any, device: str) -> tuple[str, dict[str, int]]:
    """The shape do_bench and the summary use: the first bench shape on CUDA, else the first public one."""
    if device == "cuda" and task.spec.shapes.bench:
        return "bench", dict(task.spec.shapes.bench[0])
    return "public", dict(task.spec.shapes.public[0])


def do_bench_ms(task: Any, kind: str, shape: dict[str, int], dsl: str = "triton") -> float:
    """triton.testing.do_bench (median; Triton flushes L2 between calls) of the shipped kernel on `shape`, in the trusted process."""
    import importlib.util

    import torch
    import triton.testing

    from gym.tasks.inputs import generate_inputs, public_seed
    from gym.tasks.references import call_args

    spec = importlib.util.spec_from_file_location(f"solution_{task.id.replace('/', '_')}", task.solution_for(dsl))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    dtype_name = task.spec.dtypes[0]
    inputs = generate_inputs(task, shape, getattr(torch, dtype_name), public_seed(task.id, dtype_name, kind, 0), torch.device("cuda"))
    args = call_args(inputs, task.spec.params)
    return float(triton.testing.do_bench(lambda: module.kernel(*args), return_mode="median"))


def child_task(config: dict[str, Any]) -> dict[str, Any]:
    """Grade one task's shipped solution and, on CUDA, time the same kernel with do_bench."""
    sys.path.insert(0, str(ROOT))
    from gym.grading.grader import grade
    from gym.grading.options import GradeOptions
    from gym.grading.timing.timing_policy import TimingPolicy
    from gym.tasks.loader import find_task

    task = find_task(config["task"])
    device = config["device"]
    policy = TimingPolicy(
        min_reps=config["reps"], max_reps=max(config["reps"], config["max_reps"]), budget_s=config["timing_budget_s"], warmup_s=config["warmup_s"]
    )
    dsl = config.get("dsl", "triton")
    result = grade(task, task.solution_for(dsl), GradeOptions(sandbox=config["sandbox"], timing=policy, **grade_kwargs(device)), device=device)
    entries = shape_entries(task, result)
    kind, shape = comparison_shape(task, device)
    compared = next((entry for entry in entries if entry["shape"] == shape), None)
    row: dict[str, Any] = {
        "status": result.status.value,
        "dsl": result.dsl,
        "sandbox": result.environment.sandbox,
        "error": (result.error or "")[:2000] or None,
        "integrity_flags": list(result.integrity_flags),
        "grade_s": result.duration_s,
        "interpreted": result.timings.interpreted if result.timings else None,
        "speedup_vs_eager": result.speedup_vs_eager,
        "speedup_vs_compile": result.speedup_vs_compile,
        "sol_fraction": result.sol_fraction,
        # The traffic model's figures (counted by the witness, modelled on the default profile), beside the measured ones.
        "traffic_ratio": result.traffic_ratio,
        "modelled_speedup_vs_eager": result.modelled_speedup_vs_eager,
        "modelled_speedup_vs_compile": result.modelled_speedup_vs_compile,
        "shapes": entries,
        "compared_shape": shape,
        "compared_trial": compared["trial"] if compared else None,
        "do_bench_ms": None,
        "ours_vs_do_bench": None,
        "do_bench_note": None,
    }
    if device != "cuda":
        row["do_bench_note"] = "n/a on CPU"
    elif result.status.value != "passed":
        row["do_bench_note"] = "not run: the grade did not pass"
    else:
        try:
            row["do_bench_ms"] = do_bench_ms(task, kind, shape, dsl)
        except Exception as error:  # noqa: BLE001 - reported in the row, not fatal
            row["do_bench_note"] = f"do_bench failed: {type(error).__name__}: {str(error)[:300]}"
        ours = compared["candidate"]["median_ms"] if compared and compared["candidate"] else None
        if ours and row["do_bench_ms"]:
            row["ours_vs_do_bench"] = ours / row["do_bench_ms"]
        elif row["do_bench_note"] is None:
            row["do_bench_note"] = f"no candidate timing of ours at {format_shape(shape)}"
    row["grader_modules"] = sorted(non_stdlib_modules())  # everything this grade (and do_bench) imported beyond the stdlib
    return row


def child_main(kind: str, config_file: Path, row_file: Path) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds grade(): its sandbox kills the worker on the way out
    config = json.loads(config_file.read_text())
    row = child_probe(config) if kind == "probe" else child_task(config)
    partial = row_file.with_suffix(".partial")
    partial.write_text(json.dumps(row))
    partial.replace(row_file)


# ----------------------------------------------------------------------------------------------
# Parent side: the standard library only.
# ----------------------------------------------------------------------------------------------


class Report:
    """The JSON-lines report: each row written, flushed and synced as soon as it is known."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self._file: IO[str] = path.open("w", encoding="utf-8")

    def write(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def _die_with_parent() -> None:
    """In the child: SIGTERM when the parent dies (Linux), so a killed check leaves no grade running."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Stopped(Exception):
    """The check got SIGTERM (e.g. from gpu_check.sh's backstop `timeout`)."""


def _stopped(signum: int, _frame: Any) -> None:
    raise Stopped(signal.Signals(signum).name)


def stop_child(process: subprocess.Popen[Any], grace_s: float) -> None:
    """SIGTERM first (the child unwinds grade(), whose sandbox kills the worker), then SIGKILL."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_child(command: list[str], timeout_s: float, log: Path, row_file: Path, grace_s: float = 10.0) -> tuple[dict[str, Any] | None, str | None]:
    """Run a child to completion or to its deadline; (its row, None) or (None, why there is none)."""
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        try:
            process.wait(timeout=max(0.0, timeout_s))
        except subprocess.TimeoutExpired:
            stop_child(process, grace_s)
            return None, f"{KILLED}: stopped after {time.monotonic() - started:.0f} s, its budget of {timeout_s:.0f} s spent"
        except BaseException:
            stop_child(process, grace_s)
            raise
    if row_file.is_file():
        return json.loads(row_file.read_text()), None
    tail = log.read_text(errors="replace")[-1500:] if log.is_file() else ""
    return None, f"{CHECK_ERROR}: the child exited {process.returncode} without a row; its output ends:\n{tail}"


def format_shape(shape: dict[str, Any] | None) -> str:
    return ",".join(f"{key}={value}" for key, value in shape.items()) if shape else "-"


def cell(value: float | None, pattern: str) -> str:
    return pattern.format(value) if isinstance(value, int | float) and math.isfinite(value) else "-"


def ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda index: values[index])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            result[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return result


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation of paired figures (None with fewer than three pairs or no spread)."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx, vy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return cov / (vx * vy) ** 0.5 if vx > 0 and vy > 0 else None


def modelled_line(rows: list[dict[str, Any]]) -> str:
    """Modelled vs measured speedups vs eager, side by side: their rank correlation over the passed rows."""
    pairs = [
        (row["modelled_speedup_vs_eager"], row["speedup_vs_eager"])
        for row in rows
        if row["status"] == "passed" and row.get("modelled_speedup_vs_eager") and row.get("speedup_vs_eager")
    ]
    rho = spearman([pair[0] for pair in pairs], [pair[1] for pair in pairs])
    figure = f"{rho:.2f}" if rho is not None else "n/a (fewer than 3 pairs)"
    return f"modelled (H100 SXM, not measured) vs measured speedup vs eager: Spearman rank correlation {figure} over {len(pairs)} passed tasks"


def summary_lines(run: dict[str, Any], rows: list[dict[str, Any]], wall_s: float, budget_s: float, report: Path) -> list[str]:
    """The one-screen summary: a header, one line per task at the compared shape, the totals."""
    device = run.get("gpu") or "CPU (Triton interpreter: timings only check the harness)"
    lines = [
        f"Kernel Gym GPU check: {device} | torch {run.get('torch')} | triton {run.get('triton')} | python {run.get('python')} | {wall_s:.0f} s of {budget_s:.0f} s",
        f"sandbox: {run.get('sandbox')}" + (f" ({run['sandbox_note']})" if run.get("sandbox_note") else " (isolated)"),
        f"{'task':26} {'status':12} {'shape':20} {'ours ms':>9} {'x eager':>9} {'x compile':>9} {'SOL':>5} {'RSE':>6} {'do_bench':>10} {'ours/db':>7} {'mod x eager':>11}",
    ]
    for row in rows:
        compared: dict[str, Any] = next((entry for entry in row.get("shapes") or [] if entry["trial"] == row.get("compared_trial")), {})
        candidate = compared.get("candidate") or {}
        status = row["status"][:12]
        do_bench = cell(row.get("do_bench_ms"), "{:.4f}") if row.get("do_bench_ms") else (row.get("do_bench_note") or "-")
        if len(do_bench) > 10:
            do_bench = do_bench[:10] if do_bench == "n/a on CPU" else "-"
        lines.append(
            f"{row['task'][:26]:26} {status:12} {format_shape(row.get('compared_shape'))[:20]:20} {cell(candidate.get('median_ms'), '{:.4f}'):>9} "
            f"{cell(compared.get('speedup_vs_eager'), '{:.3g}x'):>9} {cell(compared.get('speedup_vs_compile'), '{:.3g}x'):>9} "
            f"{cell(compared.get('sol_fraction'), '{:.0%}'):>5} {cell(candidate.get('rse'), '{:.1%}'):>6} {do_bench:>10} {cell(row.get('ours_vs_do_bench'), '{:.2f}'):>7} "
            f"{cell(row.get('modelled_speedup_vs_eager'), '{:.3g}x'):>11}"
        )
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    lines.append(f"{len(rows)} tasks: " + ", ".join(f"{count} {status}" for status, count in sorted(counts.items())) + f" | rows: {report}")
    lines.append("shape: the first bench shape (GPU) or public shape (CPU); x eager / x compile / SOL at it; ours/db = our median / do_bench's, same kernel")
    lines.append(modelled_line(rows))
    notes = [
        f"  {row['task']}: {row.get('reason') or row.get('error')}" for row in rows if row["status"] != "passed" and (row.get("reason") or row.get("error"))
    ]
    return lines + [line.splitlines()[0][:200] for line in notes[:6]]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="report folder (default gpu-check, selftest build/gpu-selftest)")
    parser.add_argument("--budget-s", type=float, default=None, help="total seconds for the whole check (default 480, selftest 300)")
    parser.add_argument("--grade-budget-s", type=float, default=None, help="seconds one task may take, grade and do_bench (default 90)")
    parser.add_argument("--min-start-s", type=float, default=None, help="start a task only with this much of the total left (default 20, selftest 10)")
    parser.add_argument("--tasks", default=None, help="comma-separated task ids (default all; selftest " + ",".join(SELFTEST_TASKS) + ")")
    parser.add_argument("--dsl", choices=("triton", "helion"), default="triton", help="grade each task's solution.py (triton) or solution_helion.py (helion)")
    parser.add_argument("--sandbox", default="auto", help="auto (bwrap when usable, else process), bwrap, process or docker")
    parser.add_argument("--no-bwrap", action="store_true", help="with --sandbox auto: do not try bwrap (take the process fallback)")
    parser.add_argument("--cpu", action="store_true", help="grade on CPU under the Triton interpreter (no GPU needed)")
    parser.add_argument("--reps", type=int, default=None, help="timed calls in the first round (default 20, selftest 3)")
    parser.add_argument("--max-reps", type=int, default=None, help="timed calls in all rounds of a shape (default 100, selftest 6)")
    parser.add_argument("--timing-budget-s", type=float, default=None, help="seconds of further timing rounds per grade (default 3, selftest 0)")
    parser.add_argument("--selftest", action="store_true", help="CPU, --no-bwrap, three tasks, small budgets; exit 1 unless every grade passed")
    parser.add_argument("--child", choices=("probe", "task"), help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--row-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    selftest = args.selftest
    defaults = {
        "out": ROOT / ("build/gpu-selftest" if selftest else "gpu-check"),
        "budget_s": 300.0 if selftest else 480.0,
        "grade_budget_s": 90.0,
        "min_start_s": 10.0 if selftest else 20.0,
        "tasks": ",".join(SELFTEST_TASKS) if selftest else None,
        "reps": 3 if selftest else 20,
        "max_reps": 6 if selftest else 100,
        "timing_budget_s": 0.0 if selftest else 3.0,
    }
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if selftest:
        args.cpu = True
        args.no_bwrap = True
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.child:
        child_main(args.child, args.config, args.row_file)
        return 0
    started = clock()
    deadline = started + args.budget_s
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "logs"
    work.mkdir(exist_ok=True)
    report = Report(args.out / REPORT_FILE)
    signal.signal(signal.SIGTERM, _stopped)
    config: dict[str, Any] = {
        "cpu": args.cpu,
        "no_bwrap": args.no_bwrap,
        "sandbox": args.sandbox,
        "reps": args.reps,
        "max_reps": args.max_reps,
        "timing_budget_s": args.timing_budget_s,
        "warmup_s": 0.0 if args.cpu else 0.025,
        "dsl": args.dsl,
    }

    def child(kind: str, name: str, extra: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any] | None, str | None]:
        stem = name.replace("/", "_")
        config_file, row_file = work / f"{stem}.config.json", work / f"{stem}.row.json"
        config_file.write_text(json.dumps({**config, **extra}))
        row_file.unlink(missing_ok=True)
        command = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--config", str(config_file), "--row-file", str(row_file)]
        return run_child(command, timeout_s, work / f"{stem}.log", row_file)

    print(f"gpu_check: probing the environment (budget {args.budget_s:.0f} s, per task {args.grade_budget_s:.0f} s) ...", flush=True)
    try:
        run, problem = child("probe", "probe", {}, min(240.0, args.budget_s))
    except (Stopped, KeyboardInterrupt) as stopped:
        run, problem = None, f"the check was stopped ({str(stopped) or type(stopped).__name__})"
    base = {"row": "run", "selftest": args.selftest, "budget_s": args.budget_s, "grade_budget_s": args.grade_budget_s, "timing": config}
    if run is None:
        report.write({**base, "status": CHECK_ERROR, "error": problem})
        print(f"gpu_check: the environment probe failed: {problem}", file=sys.stderr)
        return 2
    if run["device"] != "cuda" and not args.cpu:
        report.write({**base, **run, "status": "no_gpu"})
        print(f"gpu_check: torch {run['torch']} sees no CUDA device: this check needs a GPU (--selftest runs it on CPU)", file=sys.stderr)
        return 2
    report.write({**base, **run, "status": "ok"})
    config.update(device=run["device"], sandbox=run["sandbox"])
    sandbox = {"sandbox": run["sandbox"], "sandbox_note": run["sandbox_note"], "isolated": run["isolated"]}
    print(
        f"gpu_check: {run['device']} {run.get('gpu') or ''} torch {run['torch']} triton {run['triton']}; sandbox {run['sandbox']}"
        + (f" ({run['sandbox_note']})" if run["sandbox_note"] else ""),
        flush=True,
    )
    worker = run.get("worker_import_trace") or {}
    if "error" in worker:
        print(f"gpu_check: the worker's import trace failed: {worker['error']}", file=sys.stderr)

    known = run["tasks"] if args.dsl == "triton" else run["helion_tasks"]
    if args.dsl == "helion" and not run["helion"]:
        print("gpu_check: --dsl helion needs helion installed for this python (pip install helion==1.5.1 packaging)", file=sys.stderr)
        return 2
    task_ids = [name.strip() for name in args.tasks.split(",") if name.strip()] if args.tasks else known
    unknown = [name for name in task_ids if name not in known]
    if unknown:
        print(f"gpu_check: unknown tasks {unknown}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    interrupted: str | None = None
    for task_id in task_ids:
        left = deadline - clock()
        row: dict[str, Any] = {"row": "task", "task": task_id, **sandbox}
        if interrupted:
            row.update(status=SKIPPED, reason=f"the check was stopped ({interrupted})")
        elif left < args.min_start_s:
            row.update(status=SKIPPED, reason=f"total budget of {args.budget_s:.0f} s spent ({max(0.0, left):.0f} s left, a task needs {args.min_start_s:.0f})")
        else:
            limit = min(args.grade_budget_s, left)
            try:
                result, why = child("task", task_id, {"task": task_id}, limit)
            except (Stopped, KeyboardInterrupt) as stopped:
                interrupted = str(stopped) or type(stopped).__name__
                result, why = None, f"{KILLED}: the check was stopped ({interrupted}) during this grade"
            if result is None:
                row.update(status=why.split(":", 1)[0] if why else CHECK_ERROR, reason=why)
                if limit < args.grade_budget_s and why and why.startswith(f"{KILLED}: stopped after"):
                    row["reason"] += " (the rest of the total budget)"
            else:
                row.update(result)
                row.update(sandbox_note=sandbox["sandbox_note"], isolated=sandbox["isolated"])
        report.write(row)
        rows.append(row)
        print(f"[{clock() - started:5.0f} s] {task_id:28} {row['status']:12} sandbox {row.get('sandbox')}", flush=True)
    wall_s = clock() - started
    failed = [row["task"] for row in rows if row["status"] != "passed" and (args.selftest or row["status"] != SKIPPED)]
    report.write({"row": "end", "wall_s": wall_s, "tasks": len(rows), "passed": sum(row["status"] == "passed" for row in rows), "not_passed": failed})
    report.close()
    lines = summary_lines(run, rows, wall_s, args.budget_s, report.path)
    (args.out / SUMMARY_FILE).write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    return 143 if interrupted else 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

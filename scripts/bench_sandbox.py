"""Print the per-grade overhead of each sandbox backend against a plain subprocess.

    .venv/bin/python scripts/bench_sandbox.py [--reps 15]

Every backend grades the same trivial submission (no kernel launch) on
l1/vector_add; the overhead of a backend is its median grade time minus the
`process` backend's. Targets: bwrap <= 50 ms, docker <= 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox import available_sandboxes
from gym.tasks.loader import find_task

TRIVIAL = "def kernel(x, y):\n    return x + y\n"
TARGETS = {"bwrap": 0.050, "docker": 1.0}


def jail_only_ms(reps: int) -> tuple[float, float]:
    """Median ms of /usr/bin/true inside the exact bwrap jail a grade uses, and bare."""
    from gym.sandbox import Job
    from gym.sandbox.bwrap import BwrapSandbox, lease_uid
    from gym.sandbox.environment import runtime_python

    with tempfile.TemporaryDirectory() as tmp, lease_uid() as uid:
        root = Path(tmp)
        for name in ("in", "out", "scratch"):
            (root / name).mkdir()
        (root / "in" / "passwd").write_text("sandbox:x:0:0::/:/bin/false\n")
        root.chmod(0o711)
        (root / "in").chmod(0o755)
        (root / "in" / "passwd").chmod(0o644)
        job = Job(in_dir=root / "in", out_dir=root / "out", scratch_dir=root / "scratch", device="cpu")
        command = BwrapSandbox().command(job, uid, runtime_python())
        jailed = command[: command.index("--chdir")] + ["--", "/usr/bin/true"]

        def median(argv: list[str]) -> float:
            runs = []
            for _ in range(reps):
                start = time.perf_counter()
                subprocess.run(argv, check=True)
                runs.append(time.perf_counter() - start)
            return statistics.median(runs) * 1e3

        return median(jailed), median(["/usr/bin/true"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    task = find_task("l1/vector_add")
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        submission = Path(tmp) / "trivial.py"
        submission.write_text(TRIVIAL)
        for name, sandbox in sorted(available_sandboxes().items(), key=lambda item: item[0] != "process"):
            problem = sandbox.check()
            if problem:
                print(f"{name:8} unavailable: {problem}")
                continue
            grade(task, submission, GradeOptions(sandbox=name, timing_reps=0))  # warm caches
            samples[name] = []
        # Round-robin over the backends so machine noise and drift hit them alike.
        for _ in range(args.reps):
            for name in samples:
                start = time.perf_counter()
                result = grade(task, submission, GradeOptions(sandbox=name, timing_reps=0))
                samples[name].append(time.perf_counter() - start)
                assert result.status.value == "passed", result.feedback
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians.get("process")
    for name, median in medians.items():
        line = f"{name:8} median grade {median * 1e3:7.0f} ms"
        if base is not None and name != "process":
            overhead = median - base
            target = TARGETS.get(name)
            verdict = "" if target is None else f" (target <= {target * 1e3:.0f} ms: {'met' if overhead <= target else 'MISSED'})"
            line += f"   overhead vs process {overhead * 1e3:+6.0f} ms{verdict}"
        print(line)
    if "bwrap" in medians:
        jailed, bare = jail_only_ms(args.reps)
        print(f"bwrap jail alone (setpriv + prlimit + bwrap around /usr/bin/true): {jailed:.1f} ms vs {bare:.1f} ms bare")


if __name__ == "__main__":
    main()

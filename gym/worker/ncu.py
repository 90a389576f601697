"""Nsight Compute's speed-of-light figures of one replay, on request (`kgym grade --profile ncu`).

The witness, after every other replay of a GPU job, runs

    ncu --section SpeedOfLight --csv --target-processes all python -P -m gym.worker.ncu IN_DIR OUT_DIR ITEM

where the child replays one item's tape with the kernels file alone (no other code of the
submission exists in it, as in every replay). ncu's CSV gives, per kernel, "Memory Throughput"
and "Compute (SM) Throughput" as % of peak; the figures reported are their averages over the
candidate's Triton kernels weighted by each kernel's duration. Where ncu is missing or the
GPU's performance counters are not readable from the sandbox (ERR_NVGPUCTRPERM: the driver's
RmProfilingAdminOnly is on), the note says so and the grade goes on.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

# Seconds ncu may take over one replay (it replays each kernel once per metric pass).
NCU_TIMEOUT_S = 120.0
MEMORY = "Memory Throughput"
COMPUTE = "Compute (SM) Throughput"
DURATION = "Duration"


def ncu_command(ncu: str, in_dir: Path, out_dir: Path, item: int) -> list[str]:
    """The command line ncu runs the replay child with."""
    return [
        ncu,
        "--section",
        "SpeedOfLight",
        "--csv",
        "--target-processes",
        "all",
        sys.executable,
        "-P",
        "-m",
        "gym.worker.ncu",
        str(in_dir),
        str(out_dir),
        str(item),
    ]


def _number(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse_speed_of_light(text: str, kernels: set[str]) -> tuple[float | None, float | None]:
    """(memory %, compute %) from ncu's CSV, duration-weighted over the kernels whose name starts
    with one of `kernels` (every kernel when none match); (None, None) when there are no rows."""
    start = text.find('"ID"')
    if start < 0:
        return None, None
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    by_kernel: dict[str, dict[str, float]] = {}
    for row in rows:
        # A line after the table (ncu's own log) reads as a row of missing fields: it has no value.
        key = f"{row.get('ID') or ''}:{row.get('Kernel Name') or ''}"
        value = _number(row.get("Metric Value", ""))
        if value is None:
            continue
        by_kernel.setdefault(key, {})[row.get("Metric Name", "")] = value
    ours = {key: metrics for key, metrics in by_kernel.items() if any(key.split(":", 1)[1].startswith(name) for name in kernels)} or by_kernel
    weighted = [(metrics.get(DURATION, 1.0), metrics) for metrics in ours.values() if MEMORY in metrics or COMPUTE in metrics]
    total = sum(weight for weight, _ in weighted)
    if not weighted or total <= 0:
        return None, None

    def mean(name: str) -> float | None:
        pairs = [(weight, metrics[name]) for weight, metrics in weighted if name in metrics]
        share = sum(weight for weight, _ in pairs)
        return sum(weight * value for weight, value in pairs) / share if share > 0 else None

    return mean(MEMORY), mean(COMPUTE)


def run_ncu(in_dir: Path, out_dir: Path, item: int, kernels: set[str]) -> tuple[float | None, float | None, str | None]:
    """(memory %, compute %, note): ncu over the replay child, or why there are no figures."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return None, None, "ncu (Nsight Compute) is not installed where the sandbox can run it: no counter figures"
    try:
        done = subprocess.run(ncu_command(ncu, in_dir, out_dir, item), capture_output=True, text=True, timeout=NCU_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return None, None, f"ncu took longer than {NCU_TIMEOUT_S:.0f} s over one replay: no counter figures"
    output = done.stdout + done.stderr
    if "ERR_NVGPUCTRPERM" in output:
        return None, None, "the GPU's performance counters are not permitted to this user (ERR_NVGPUCTRPERM: RmProfilingAdminOnly is on): no counter figures"
    memory, compute = parse_speed_of_light(done.stdout, kernels)
    if memory is None and compute is None:
        return None, None, f"ncu gave no speed-of-light rows (exit {done.returncode}): {output.strip()[-300:]}"
    return memory, compute, None


def main(argv: list[str]) -> int:
    """The replay child: one item's tape, compiled kernels, on its fresh inputs, once."""
    import torch

    from .launched_modules import LAUNCHED_DIR
    from .protocol import REQUEST_FILE, WorkerRequest
    from .tape import CallTape, tape_file
    from .tape_replay import TapeReplay, load_kernels
    from .tensor_io import read_tensor
    from .witness_protocol import KERNELS_FILE, REPLAY_DIR, REPLAY_REQUEST_FILE, ReplayRequest

    in_dir, out_dir, item_id = Path(argv[0]), Path(argv[1]), int(argv[2])
    request = WorkerRequest.model_validate_json((in_dir / REQUEST_FILE).read_text())
    replay_request = ReplayRequest.model_validate_json((in_dir / REPLAY_DIR / REPLAY_REQUEST_FILE).read_text())
    item = next(entry for entry in replay_request.items if entry.id == item_id)
    device = torch.device(request.device)
    tape = CallTape.model_validate_json((out_dir / tape_file(item.tape)).read_bytes())
    inputs = {arg.name: read_tensor(in_dir / REPLAY_DIR, arg.tensor).to(device) for arg in item.args if arg.tensor is not None}
    kernels = load_kernels(in_dir / KERNELS_FILE, "kgym_kernels_ncu", interpret=False, launched=in_dir / REPLAY_DIR / LAUNCHED_DIR)
    TapeReplay(tape, device, inputs).run(kernels, torch.cuda.synchronize)
    return 0


if __name__ == "__main__":  # pragma: no cover - run by ncu inside the sandbox
    raise SystemExit(main(sys.argv[1:]))

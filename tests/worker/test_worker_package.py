"""The sandbox side is one package that imports nothing else of the gym, and one
torch policy and one timer serve both sides of the boundary."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gym.worker
from gym.grading.baselines import measure as baselines
from gym.grading.intake import audit
from gym.grading.judging import integrity
from gym.tasks import prompt
from gym.worker import timer, torch_policy

WORKER = Path(gym.worker.__file__).resolve().parent
# What the worker may import besides itself: the standard library and the runtime's packages (helion: only
# for a Helion submission, gym.worker.helion_dsl; sandbox/build_runtime.sh installs it).
THIRD_PARTY = {"torch", "triton", "numpy", "pydantic", "helion"}


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """(line, module, level) of every import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or "", node.level))
    return found


def test_worker_package_imports_nothing_of_the_gym_outside_itself() -> None:
    files = sorted(WORKER.rglob("*.py"))
    assert len(files) >= 8
    problems = []
    for path in files:
        for line, module, level in _imports(path):
            if level:
                continue  # relative: inside the package
            root = module.split(".")[0]
            if root == "gym" and not (module == "gym.worker" or module.startswith("gym.worker.")):
                problems.append(f"{path.name}:{line}: imports {module}")
            elif root != "gym" and root not in THIRD_PARTY and root not in sys.stdlib_module_names:
                problems.append(f"{path.name}:{line}: imports {module} (not in the sandbox runtime)")
    assert not problems, problems


def test_the_trusted_side_takes_protocol_names_from_the_protocol_module() -> None:
    grading = Path(audit.__file__).resolve().parent
    for path in grading.glob("*.py"):
        for line, module, _ in _imports(path):
            assert module != "gym.worker.__main__", f"{path.name}:{line} imports the worker's entry module"


def test_one_torch_policy_feeds_the_runtime_and_the_prompt() -> None:
    assert integrity.TRIPWIRES is torch_policy.TRIPWIRES
    for name in ("promote_types", "result_type"):
        assert f"aten.{name}" in torch_policy.allowed_ops()
    # A task's allowed_torch widens the runtime, whichever way it is written.
    for entry in ("arange", "torch.arange", "aten.arange"):
        assert "aten.arange" in torch_policy.allowed_ops([entry])
    # The audit leaves torch calls to the op trace: the same source is clean either way.
    assert not audit.audit_source("import torch\ndef kernel(n):\n    return torch.arange(n)\n")
    # An address is not data: data_ptr is no host bridge (pointer-equality checks are honest).
    assert "data_ptr" not in torch_policy.HOST_BRIDGES
    text = "\n".join(torch_policy.prompt_lines(["arange"]))
    assert "torch.promote_types" in text and "torch.arange" in text
    assert prompt.prompt_lines is torch_policy.prompt_lines


def test_one_timer_serves_the_worker_and_the_reference() -> None:
    assert baselines.time_each is timer.time_each
    source = (WORKER / "submission.py").read_text()
    assert "CallTimer = worker_timer.CallTimer" in source
    assert "L2_FLUSH_BYTES" not in source and "L2_FLUSH_BYTES" not in Path(baselines.__file__).read_text()
    runs = []
    assert timer.warm_up(lambda: runs.append(1) or True, seconds=0.0) == 1
    assert timer.warm_up(lambda: runs.append(1) or True, seconds=10.0, max_runs=7) == 7
    assert timer.warm_up(lambda: False, seconds=10.0) == 0


def test_tracing_ops_does_not_import_dynamo() -> None:
    """A cold worker must not pay for torch._dynamo (about 1.3 s of CPU here): recent torch wraps a
    dispatch mode's handler in torch._dynamo.disable unless the mode opts out, as OpTrace does. The
    trace (and a subclass of it) still counts every op."""
    script = """
import sys
import torch
from gym.worker.op_trace import ForwardingTrace, OpTrace
trace = OpTrace()
with trace:
    torch.ones(8).add(1).mul(2)
class Child(OpTrace):
    pass
child = Child()
with child:
    torch.zeros(2).neg()
print(sorted(trace.ops.items()), sorted(child.ops.items()), issubclass(ForwardingTrace, OpTrace), "torch._dynamo" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False, cwd=WORKER.parent.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == "[('aten.add', 1), ('aten.mul', 1), ('aten.ones', 1)] [('aten.neg', 1), ('aten.zeros', 1)] True False".split()

"""Where grades run: the executor layer.

An `Executor` takes (task, submission) pairs and returns GradeResults; it is
thread-safe and blocking, so every caller (`grade_many`, `kgym run`, `kgym
serve`, `gym.harness.Env`) uses it as its grader. `local` grades on this host
(a device pool, warm sandboxes); `ray` sends each grade to a Ray cluster.
"""

from gym.errors import ExecutorError
from gym.execution.executor import EXECUTORS, Executor, GradeOptions, executor_grader, make_executor

__all__ = ["EXECUTORS", "Executor", "ExecutorError", "GradeOptions", "executor_grader", "make_executor"]

"""Every random stream of a grade, named once.

A grade's inputs and choices come from seeds: a public seed (where the draw sits in the task: its
id, dtype, the kind and number of the shape, `gym.tasks.inputs.public_seed`) mixed with the grade's
secret (`mix_seed`), so the same secret grades the same inputs again and a fresh one gives inputs
nobody has seen. `GradeSeeds` is the one place those strings are spelled: planning (trials, timed,
warm-up and bench calls, hardened trials, late calls), the replay (which call, fresh inputs, the
shuffles), baselines (drawn as a grade's timed calls are) and the training signal (which replay is
counted) all ask it by name.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gym.tasks.inputs import mix_seed, public_seed


@dataclass(frozen=True)
class GradeSeeds:
    """The seeds of one grade of task `task_id` under `secret` (None: the public seeds, unmixed)."""

    task_id: str
    secret: int | None

    def _mixed(self, dtype: str, kind: str, index: int) -> int:
        return mix_seed(public_seed(self.task_id, dtype, kind, index), self.secret)

    def _chooser(self, dtype: str, kind: str, index: int) -> random.Random:
        return random.Random(self._mixed(dtype, kind, index))

    # -- planning ------------------------------------------------------------------------------

    def trial(self, variant: str, kind: str, index: int) -> int:
        """Inputs of trial `index` of a shape kind ("public", "hidden", a hardened kind) of dtype `variant`."""
        return self._mixed(variant, kind, index)

    def bench(self, dtype: str, index: int) -> int:
        """Inputs of benchmark shape `index`."""
        return self._mixed(dtype, "bench", index)

    def timed(self, dtype: str, label: str, rep: int) -> int:
        """Inputs of the `rep`-th timed call on trial `label` (a baseline's timed calls draw the same way)."""
        return self._mixed(dtype, f"timed-{label}", rep)

    def warmup(self, dtype: str, label: str) -> int:
        """Inputs of the warm-up call of trial `label` (a baseline's warm-up too)."""
        return self._mixed(dtype, f"warmup-{label}", 0)

    def late_calls(self, label: str) -> random.Random:
        """How many late calls trial `label` gets (drawn without the task: the count is the grade's)."""
        return random.Random(mix_seed(public_seed("late-calls", label, "", 0), self.secret))

    # -- the replay ----------------------------------------------------------------------------

    def replay_choice(self) -> random.Random:
        """Which call of each trial is replayed."""
        return self._chooser("replay", "", 0)

    def replay_inputs(self, dtype: str, label: str, attempt: int) -> int:
        """Fresh inputs of a replay of trial `label` (attempt: item x tries + try, see gym.grading.judging.replay)."""
        return self._mixed(dtype, f"replay-{label}", attempt)

    def reshuffle(self, label: str, item: int) -> random.Random:
        """The secret order of a replay's floats when its layout matches no fresh seed."""
        return self._chooser("reshuffle", label, item)

    def host_reads(self, label: str, item: int) -> random.Random:
        """The secret order of every tensor of a replay whose call read counts on the host."""
        return self._chooser("host-reads", label, item)

    # -- the training signal -------------------------------------------------------------------

    def counted(self) -> random.Random:
        """Which hidden replay is counted for the training signal."""
        return self._chooser("signal", "counted", 0)

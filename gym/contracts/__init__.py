"""Closeness contracts: the check kinds a task's contract is made of.

`Check` is the discriminated union a task file's `[[contract]]` entries
validate into; `CHECK_KINDS` maps each kind to its model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Union

from pydantic import Field

from gym.contracts.base import (
    Blame,
    CheckBase,
    CheckOutcome,
    Diagnostics,
    ExtraCall,
    SubBatchRun,
    TrialEvidence,
    ValueCheck,
    WorstElement,
)
from gym.contracts.behaviour import BatchInvariantCheck, DeterministicCheck
from gym.contracts.elementwise import AllcloseCheck, BitwiseCheck, UlpCheck
from gym.contracts.logprob import LogprobCheck
from gym.contracts.nontrivial import NontrivialCheck
from gym.contracts.norms import NormwiseCheck, OracleCheck
from gym.contracts.ranking import TopkOverlapCheck

CHECK_MODELS: tuple[type[CheckBase], ...] = (
    BitwiseCheck,
    AllcloseCheck,
    UlpCheck,
    NormwiseCheck,
    OracleCheck,
    TopkOverlapCheck,
    LogprobCheck,
    DeterministicCheck,
    BatchInvariantCheck,
    NontrivialCheck,
)

# The discriminated union a task file's `[[contract]]` entries validate into.
if TYPE_CHECKING:
    # A union over a runtime tuple is no static type; every member is a CheckBase.
    Check = CheckBase
else:
    # Union[tuple] unpacks the tuple into its members; `X | Y` cannot be built from a tuple.
    Check = Annotated[Union[CHECK_MODELS], Field(discriminator="kind")]  # noqa: UP007

CHECK_KINDS: dict[str, type[CheckBase]] = {model.model_fields["kind"].default: model for model in CHECK_MODELS}

__all__ = [
    "CHECK_KINDS",
    "Blame",
    "ExtraCall",
    "CHECK_MODELS",
    "BatchInvariantCheck",
    "BitwiseCheck",
    "AllcloseCheck",
    "Check",
    "CheckBase",
    "CheckOutcome",
    "DeterministicCheck",
    "Diagnostics",
    "LogprobCheck",
    "NontrivialCheck",
    "NormwiseCheck",
    "OracleCheck",
    "SubBatchRun",
    "TopkOverlapCheck",
    "TrialEvidence",
    "UlpCheck",
    "ValueCheck",
    "WorstElement",
]

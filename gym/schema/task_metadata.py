"""What a curriculum or a split report needs to know about a task, without running it again."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TaskMetadata(BaseModel):
    """A task's place in the distribution (gym.tasks.metadata computes it)."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="shipped (the gym's own), kernelbench, opinfo or models.")
    level: int = Field(description="1 single ops, 2 fusions, 3 blocks and models (KernelBench's levels; OpInfo ops are 1).")
    split: str = Field(description="train, val or test (gym.tasks.splits): stable, shared by the task's near-duplicates.")
    family: str = Field(
        description=(
            "The family the split is shared by: the aten ops the reference dispatches, in order ('aten.add', 'aten._softmax', "
            "'aten.mm+aten.add+aten.gelu' for a fusion; gym.tasks.splits.family_key), or the name's op when they are unknown: near-duplicates share it."
        )
    )
    op_kind: str = Field(
        description=(
            "What kind of op, read from the dispatched ops and their schemas (gym.tasks.metadata.op_kind_from_dispatch): convolution, matmul, "
            "linalg, normalisation, scan, selection, indexing, reduction, integer, elementwise."
        )
    )
    output_kind: str = Field(description='The outputs\' dtypes: "float", "int", "bool", or a mix joined by "+".')
    bench_bytes: int | None = Field(description="Minimum bytes one call moves at the bench shape (float32): inputs read plus outputs written.")
    bench_flops: int | None = Field(description="FLOPs one call does at the bench shape (matmul and convolution families; 0 for the others).")
    arithmetic_intensity: float | None = Field(description="bench_flops / bench_bytes (FLOPs per byte); None when the bytes are unknown.")
    aten_ops: int | None = Field(description="How many aten compute ops the reference dispatches at the public shape (plumbing aside).")

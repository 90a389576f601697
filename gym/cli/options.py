"""The options several commands share, as `Annotated` types (one definition, one help text)."""

from __future__ import annotations

from typing import Annotated

import typer

SuiteOption = Annotated[str | None, typer.Option("--suite", help='Only tasks of this suite or below it ("l1", "kb", "kb/l1").')]
ContractOption = Annotated[
    str | None, typer.Option("--contract", help='Grade against a contract preset instead of each task\'s own ("kernelbench": its fixed tolerance).')
]
SplitOption = Annotated[str | None, typer.Option("--split", help="Only tasks of this split: train, val or test (stable per task; see README, Splits).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
DslOption = Annotated[
    str,
    typer.Option("--dsl", help='The kernel language: "triton" (default) or "helion" (Helion kernels lowered to Triton).'),
]
RewardOption = Annotated[
    str,
    typer.Option(
        "--reward",
        help=(
            "Reward preset: default, kernelbench-fast-p (kernelbench-fast-P sets p, e.g. kernelbench-fast-1.5), kernrl, kernelgym, "
            "modelled (gym.harness.reward); `kgym run` records it in run.json (a resume must name the same)."
        ),
    ),
]
ReturnsOption = Annotated[
    str,
    typer.Option("--returns", help="How an episode's turn rewards make its return: best (default), last, discounted, kevin (discounted, gamma 0.4)."),
]
SandboxOption = Annotated[str, typer.Option("--sandbox", help="Where the submission runs: bwrap (default), docker, or process (unsafe, debugging only).")]
ExecutorOption = Annotated[
    str, typer.Option("--executor", help="Where grades run: local (this host, one device per grade) or ray (a Ray cluster; the 'ray' extra).")
]
RayAddressOption = Annotated[
    str | None, typer.Option("--ray-address", help='Ray cluster for --executor ray: "auto" (the one `ray start` runs here), HOST:PORT; default: a local Ray.')
]
NoWarmOption = Annotated[bool, typer.Option("--no-warm", help="Start every sandboxed worker cold (no warm pool).")]
FreshBaselinesOption = Annotated[
    bool, typer.Option("--fresh-baselines", help="Re-measure the reference baselines (eager, torch.compile) and overwrite the cached ones.")
]

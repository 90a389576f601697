"""Write a Kernel Gym suite as verl's parquet prompt files: train.parquet and val.parquet.

    python examples/verl/build_dataset.py --suite l1 --out data/kgym-verl             # single turn
    python examples/verl/build_dataset.py --suite l1 --out data/kgym-verl --multi-turn

Each row is one task: `prompt` (the task's prompt as one user message, with how to answer),
`data_source` "kernel_gym/<suite>", `reward_model.ground_truth` and `extra_info.task_id` the task id,
`extra_info.tools_kwargs` the submit_kernel tool's create_kwargs, `extra_info.interaction_kwargs`
the interaction's kwargs (verl <= 0.7), and `agent_name` (single_turn_agent, or tool_agent with
--multi-turn, for the tool and the interaction alike). The rows come from
`gym.integrations.verl.suite_rows`; validation uses the same tasks unless --val-suite names another
suite (every grade draws fresh inputs and hidden shapes, so a task's score is not memorised from its prompt).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gym.integrations.verl import write_parquet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="l1", help="the training suite (kgym list --suite S)")
    parser.add_argument("--val-suite", default=None, help="the validation suite (default: --suite)")
    parser.add_argument("--task", action="append", dest="tasks", help="only this task id (repeatable; training split only)")
    parser.add_argument("--out", type=Path, default=Path("data/kgym-verl"), help="folder for train.parquet and val.parquet")
    parser.add_argument("--multi-turn", action="store_true", help="rows for verl's tool agent loop (submit_kernel tool, or the interaction)")
    parser.add_argument("--max-attempts", type=int, default=3, help="submissions the multi-turn prompt announces (match the config yaml)")
    args = parser.parse_args()

    common = {"multi_turn": args.multi_turn, "max_attempts": args.max_attempts}
    train = write_parquet(args.suite, args.out / "train.parquet", task_ids=args.tasks, split="train", **common)
    val = write_parquet(args.val_suite or args.suite, args.out / "val.parquet", split="val", **common)
    print(f"wrote {train} and {val}")


if __name__ == "__main__":
    main()

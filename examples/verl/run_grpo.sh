#!/usr/bin/env bash
# GRPO on a Kernel Gym suite with verl (one node; 0.9, or 0.7 for "interaction"). Run from the repository root:
#
#   python examples/verl/build_dataset.py --suite l1 --out data/kgym-verl --multi-turn
#   MODEL=Qwen/Qwen2.5-Coder-7B-Instruct examples/verl/run_grpo.sh multi [more hydra overrides...]
#
# MODE "single": one completion per prompt, graded by compute_score (build the data without --multi-turn).
# MODE "multi":  the model calls submit_kernel, reads the grade's feedback and resubmits (tool_config.yaml);
#                compute_score then scores the episode's best submission without grading again.
# MODE "interaction": verl <= 0.7 only (0.8 removed verl.interactions). The model answers in a ```python block
#                and KernelGymInteraction replies with the grade and its feedback as the next user turn
#                (interaction_config.yaml); compute_score scores the best turn from verl's turn_scores.
#                Same --multi-turn data as "multi".
#
# Grades run where KGYM_SERVER_URL points (a `kgym serve`, token KGYM_SERVE_TOKEN), else inside each reward
# and agent-loop worker (sandbox KGYM_SANDBOX, default bwrap). The workers inherit this shell's environment
# when verl starts Ray itself; on a cluster started with `ray start`, export them there.
# KGYM_VERL_DRY_RUN=1 prints the overrides, one per line, instead of training.
set -euo pipefail

MODE=${1:-multi}
shift || true
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DATA=${DATA:-data/kgym-verl}
MODEL=${MODEL:-Qwen/Qwen2.5-Coder-7B-Instruct}
GPUS=${GPUS:-8}

OVERRIDES=(
    algorithm.adv_estimator=grpo
    algorithm.use_kl_in_reward=False
    data.train_files="$DATA/train.parquet"
    data.val_files="$DATA/val.parquet"
    data.train_batch_size=16
    data.max_prompt_length=4096
    data.max_response_length=8192
    data.filter_overlong_prompts=True
    data.truncation=error
    actor_rollout_ref.model.path="$MODEL"
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=16
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.use_kl_loss=True
    actor_rollout_ref.actor.kl_loss_coef=0.001
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.rollout.n=8
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
    reward.custom_reward_function.path=pkg://gym.integrations.verl
    reward.custom_reward_function.name=compute_score
    reward.reward_manager.name=naive
    reward.num_workers=4
    trainer.project_name=kernel-gym
    trainer.experiment_name="grpo-$MODE"
    trainer.n_gpus_per_node="$GPUS"
    trainer.nnodes=1
    trainer.val_before_train=True
    trainer.test_freq=10
    trainer.save_freq=50
    trainer.total_epochs=20
    trainer.logger='["console"]'
)

case "$MODE" in
    single)
        OVERRIDES+=(actor_rollout_ref.rollout.agent.default_agent_loop=single_turn_agent)
        ;;
    multi)
        OVERRIDES+=(
            actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent
            actor_rollout_ref.rollout.multi_turn.enable=True
            actor_rollout_ref.rollout.multi_turn.tool_config_path="$HERE/tool_config.yaml"
            actor_rollout_ref.rollout.multi_turn.format=hermes
            actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4
            actor_rollout_ref.rollout.multi_turn.max_user_turns=3
            actor_rollout_ref.rollout.multi_turn.max_tool_response_length=4096
            actor_rollout_ref.rollout.multi_turn.tool_response_truncate_side=middle
        )
        ;;
    interaction)
        OVERRIDES+=(
            actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent
            actor_rollout_ref.rollout.multi_turn.enable=True
            actor_rollout_ref.rollout.multi_turn.interaction_config_path="$HERE/interaction_config.yaml"
            actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4
            actor_rollout_ref.rollout.multi_turn.max_user_turns=3
        )
        ;;
    *)
        echo "usage: $0 [single|multi|interaction] [hydra overrides...]" >&2
        exit 2
        ;;
esac

if [[ "${KGYM_VERL_DRY_RUN:-0}" == "1" ]]; then
    printf '%s\n' "${OVERRIDES[@]}" "$@"
    exit 0
fi

exec python3 -m verl.trainer.main_ppo "${OVERRIDES[@]}" "$@"

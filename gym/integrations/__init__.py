"""Adapters for the RL stacks people train kernel agents with.

- `gym.integrations.openenv`: an openenv-core `EnvClient` for `kgym serve` (`KernelGymEnv`).
- `gym.integrations.verifiers`: `load_environment(...)`, a verifiers multi-turn environment.
- `gym.integrations.verl`: `compute_score(...)` (verl's custom reward function), a multi-turn `submit_kernel` tool (verl >= 0.8) and a `BaseInteraction` (verl <= 0.7).
- `gym.integrations.skyrl`: a skyrl-gym `BaseTextEnv`, registered as `kernel-gym`.

Each needs its own extra (`pip install 'kernel-gym[openenv]'`, `[verifiers]`, `[verl]`, `[skyrl]`);
`gym.integrations.episodes` holds what they share and needs none.
"""

"""Kernel Gym as a verifiers environment id: `kernel-gym` (verifiers imports an id as a top-level module).

    vf-eval kernel-gym --model my-model ...      # or vf.load_environment(...) with id "kernel-gym"

Everything is `gym.integrations.verifiers`; this module only makes it importable under the id's name.
Needs `pip install 'kernel-gym[verifiers]'`.
"""

from gym.integrations.verifiers import *  # noqa: F403
from gym.integrations.verifiers import __all__  # noqa: F401

"""The verifiers plugin id `ehrgym-verifiers` (verifiers imports plugins by top-level module name):
`vf-eval ehrgym-verifiers --env.taskset.base-url URL ...`. The code is `ehrgym.verifiers`."""

from ehrgym.verifiers import EhrGymEnv, EhrGymHarness, EhrGymTaskset, load_environment

__all__ = ["EhrGymTaskset", "EhrGymEnv", "EhrGymHarness", "load_environment"]

"""The built-in evaluation suites: one YAML file each (see :mod:`rl4vlm_gym.harness.suite`)."""

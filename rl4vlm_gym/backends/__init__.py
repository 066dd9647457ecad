"""Execution backends beyond one process; each is imported explicitly (``import rl4vlm_gym`` loads none)."""

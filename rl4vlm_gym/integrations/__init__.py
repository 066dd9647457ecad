"""Bridges from our envs to training libraries; each module imports its library only when used."""

"""The server of this OpenEnv environment project: :mod:`server.app`."""

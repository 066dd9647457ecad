"""Import openenv-core's server and client without its optional web UI.

``openenv.core.env_server``'s ``__init__`` imports its Gradio web interface when Gradio is installed
(it is one of openenv-core's requirements), which takes about 8 s and is never used here (the UI
is off unless ENABLE_WEB_INTERFACE is set). Gradio is hidden while openenv-core is first imported,
so that import fails as openenv-core expects of a missing optional dependency and it carries on
without the UI; Gradio stays importable afterwards for anyone else.
"""

from __future__ import annotations

import sys

try:
    import openenv  # noqa: F401
except ImportError as err:
    raise ImportError(
        f"rl4vlm_gym.server (rl4vlm-gym serve, rl4vlm/Remote-v0) needs openenv-core: pip install 'rl4vlm-gym[server]' ({err})"
    ) from err

if "openenv.core.env_server" not in sys.modules and "gradio" not in sys.modules:
    sys.modules["gradio"] = None  # type: ignore[assignment]  # makes `import gradio` raise ModuleNotFoundError
    try:
        import openenv.core.env_client  # noqa: F401
        import openenv.core.env_server  # noqa: F401
    finally:
        if sys.modules.get("gradio", 0) is None:
            del sys.modules["gradio"]

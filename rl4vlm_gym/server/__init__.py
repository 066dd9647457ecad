"""RL4VLM Gym envs over OpenEnv's HTTP/WebSocket protocol (extra ``server``), and the env that plays them.

Serve any registered id, or a suite's tasks::

    rl4vlm-gym serve rl4vlm/Sokoban-v0 --port 8000 --max-sessions 16 --idle-timeout 600
    rl4vlm-gym serve smoke --port 0              # a suite; port 0 picks one and prints it

and play it from anywhere, as a Gymnasium env::

    env = gym.make("rl4vlm/Remote-v0", url="http://host:8000", env_id="rl4vlm/Sokoban-v0", level=1)
    obs, info = env.reset(seed=7)               # the four keys, info and rewards of the local env
    obs, reward, terminated, truncated, info = env.step("<action>up</action>")

or with openenv-core's client (:class:`~rl4vlm_gym.server.remote.VLMEnvClient`, async or ``.sync()``).

The server is openenv-core's ``HTTPEnvServer`` (``create_fastapi_app``) with
:class:`~rl4vlm_gym.server.environment.ServedEnv` as its ``Environment``; ``openenv validate URL``
passes. Endpoints and messages are OpenEnv's:

- ``GET /health``, ``/metadata``, ``/schema`` (the JSON schemas of the types below), ``/docs``.
- ``WS /ws``: one session = one env of its own, made on the first reset, closed with the session
  (client closes or vanishes, idle longer than ``--idle-timeout``, server stops). Messages (JSON
  text): ``{"type": "reset", "data": {...reset keywords}}``, ``{"type": "step", "data": {"text":
  "..."}}``, ``{"type": "state"}``, ``{"type": "close"}``. Answers: ``{"type": "observation",
  "data": {"observation": OBS, "reward": float, "done": bool}}``, ``{"type": "state", "data":
  STATE}`` or OpenEnv's error shape ``{"type": "error", "data": {"message": str, "code": CODE}}``
  with CODE one of ``INVALID_JSON``, ``UNKNOWN_TYPE``, ``VALIDATION_ERROR`` (e.g. an action over
  ``MAX_ACTION_CHARS``), ``EXECUTION_ERROR`` (the env or its arguments refused: the message says
  why), ``CAPACITY_REACHED`` (more sessions than ``--max-sessions``: sent, then the socket closes).
  A message over 8 MiB closes the socket (WebSocket code 1009) before it is parsed.
- ``POST /reset``, ``POST /step`` (``{"action": {"text": ...}, ...}``), ``GET /state``: OpenEnv's
  stateless HTTP calls (a fresh env per request). ``/step`` takes reset keywords next to the action
  (``{"action": {"text": "up"}, "seed": 7, "env_id": "..."}``): one step from a reset, for
  single-turn tasks. Errors: ``{"detail": ...}`` with 400 (bad arguments), 409 (no episode), 413
  (a body over 8 MiB, refused before parsing), 422 (a malformed request), 500.

Reset keywords (all optional; unknown ones are refused by name): ``seed`` (int >= 0), ``options``
(Gymnasium's, e.g. ``{"level": 2}``; at most 10,000 characters as JSON), ``env_id`` (a served id or
suite task; required when the server serves several), ``make_kwargs`` (the env's ``gym.make``
arguments, e.g. ``{"image_size": [224, 224], "obs_mode": "image"}``; a change remakes the session's
env; only the names the operator allows, below), ``image_format``
(``"png"``, the default, or ``"raw"``; kept for the session), ``episode_id``, ``state_extras`` (groups
of STATE's extras to get with the observation, below; a step asks with ``{"text": ..., "metadata":
{"state_extras": [...]}}``).

The operator's policy (:mod:`rl4vlm_gym.server.policy`) decides which ``make_kwargs`` a client may
set, each with bounds: by default, per env, ``level``, ``obs_mode``, ``image_size``, ``reward_variant``,
``action_format``, ``action_match``, ``appearance``, ``wording``, ``max_episode_steps`` and a few family
choices (``render_view``, ``text_format``, ``duplicate``...), never a path, a renderer, a planner bound
(``optimal_steps_at_reset`` only with ``--expose-oracle``); ``--client-kwargs NAME,...`` or ``--policy
FILE`` replaces that list, and ``image_size`` is capped per side (``--max-image-size``, 1024 by
default). The operator's own ``--make-kwargs`` are not checked. Errors name the refused name (cut at
64 characters) or field and the rule, and describe a value by its type and size, never echoing it
(a validation error's ``errors`` give ``loc``, ``msg`` and ``input`` as e.g. ``"a str of 1048577
characters"``).

OBS (:class:`~rl4vlm_gym.server.models.VLMObservation`): ``image`` (``{"format": "png"|"raw"|"black",
"shape": [H, W, 3], "data": base64}``; png is a PNG file, 8-bit RGB, which this server writes with unfiltered
rows (any PNG reader takes it; :func:`~rl4vlm_gym.server.models.decode_image` reads those without Pillow, others
with it); raw is the ``uint8`` bytes in C order; an all-black frame,
as every frame in ``obs_mode="text"``, is ``"black"`` with empty data whatever format was asked;
:func:`~rl4vlm_gym.server.models.decode_image` turns each into an array), ``text``, ``mission``,
``actions`` (the admissible actions), ``info`` (``success``, ``progress``, ``level``,
``state_key``, ``optimal_steps`` and, after a step, ``action``: the parse result ``{"raw",
"parsed", "valid", "error"}``), ``terminated``, ``truncated``, ``state`` (null, or STATE with the groups
of extras the reset or step asked for in ``state_extras``: ``"rules"``, ``"oracle"``, ``"frame"``, computed
after it in the session's thread, named in its ``extras``; only those are computed, so no plan and no
fresh render is made unasked); ``reward`` and ``done`` (``terminated or truncated``) sit beside it.

STATE (:class:`~rl4vlm_gym.server.models.VLMState`): ``episode_id``, ``step_count``, ``env_id``,
``make_kwargs``, ``facts`` (the env's :meth:`~rl4vlm_gym.core.VLMEnv.facts`: its rules as JSON data,
as they hold at the current level), ``reward_variant``, ``rewards`` (the reward tables),
``has_oracle``, ``invalid_feedback``, ``obs_mode`` (the same facts under their old names),
``elapsed_steps``, ``admissible``, ``description`` (the state in words: ``describe()``),
``instruction_prompt`` (the episode's BALROG instructions, :meth:`~rl4vlm_gym.core.VLMEnv.instruction_prompt`),
``served_id``, ``max_episode_steps`` (the served id's registered time limit, in which
``rl4vlm/Remote-v0`` wraps the served env), ``card`` (the served id's card and its class's name and docstring sections) and,
only from a server started with ``--expose-oracle`` (trusted evaluation, the conformance kit),
``oracle_action``, ``optimal_steps``, ``decision`` (the state's decision facts,
:meth:`~rl4vlm_gym.core.VLMEnv.decision`, as JSON data of at most
:data:`~rl4vlm_gym.server.environment.MAX_DECISION_CHARS`; else ``decision_error`` says why), all in the
``oracle`` group, and ``fresh_frame_sha256`` (a fresh render of the state).
``rl4vlm/Remote-v0`` reads them through VLMEnv's public inspection API (``facts()``, ``describe()``,
``admissible_actions``, ``elapsed_steps``, ``decision()``), so the conformance kit checks a served env as a local one;
a group it read once comes with each later reset and step (``state_extras``): one round trip a step.
A ``state`` message answers every group (``extras`` names them).
A refused ``reset`` argument's error message starts with ``"ValueError: "``; a closed session's
(reaped idle, or the server stopping) with ``"SessionClosed: "``. ``/schema``'s ``state`` is
:class:`~rl4vlm_gym.server.models.VLMState`'s schema, which declares every key above (a key of a group
not computed is absent, not null).
"""

import rl4vlm_gym.server._openenv  # noqa: F401 - first: openenv-core without its web UI

"""What a prompt is made of: its configuration, BALROG's demonstrations, and the names they take.

:class:`PromptConfig` is part of an evaluation's protocol hash; the template names
(:data:`TEMPLATES`), output formats (:data:`OUTPUT_FORMATS`) and BALROG's agents
(:data:`BALROG_AGENTS`) are the values it accepts. Messages (:data:`Message`) are the neutral chat
form the builder writes and the exporters read.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["BALROG_AGENTS", "BALROG_SAMPLING", "OUTPUT_FORMATS", "TEMPLATES", "BalrogDemo", "Message", "PromptConfig"]

Message = dict[str, Any]
"""``{"role": "system" | "user" | "assistant", "content": [{"type": "text" | "image", ...}]}``"""

TEMPLATES: tuple[str, ...] = ("default", "rl4vlm", "vl-dac", "balrog")
BALROG_AGENTS: tuple[str, ...] = ("balrog-naive", "balrog-cot", "balrog-robust-naive", "balrog-robust-cot", "balrog-few-shot")
"""BALROG's agents (``naive``, ``cot``, ``robust_naive``, ``robust_cot``, ``few_shot``): the
``balrog`` template's output formats, and the env's ``action_format`` that parses their replies."""
BALROG_SAMPLING: dict[str, Any] = {"temperature": 1.0, "max_tokens": 8192}
"""BALROG's ``client.generate_kwargs`` (``balrog/config/config.yaml``): the model agents' defaults
under the ``balrog`` template."""
OUTPUT_FORMATS: tuple[str, ...] = ("json", "tags", "plain", *BALROG_AGENTS)


@dataclass(frozen=True)
class PromptConfig:
    """How observations become prompts; part of an evaluation's protocol hash.

    Attributes:
        template: one of :data:`TEMPLATES`.
        output_format: what the model is asked to write: ``"json"``, ``"tags"`` or ``"plain"``
            (the ``rl4vlm`` and ``vl-dac`` templates fix their own JSON format).
        history: past steps replayed before the current observation; under the ``balrog``
            template BALROG's ``max_text_history``: the observations, the current one included,
            that keep their text (its history holds ``max(history, images)`` observations).
        images: observations that carry their image, the current one included (0: text only;
            ``balrog``: BALROG's ``max_image_history``, 0 for its LLM mode).
        show_actions: list the admissible actions in the prompt.
    """

    template: str = "default"
    output_format: str = "json"
    history: int = 0
    images: int = 1
    show_actions: bool = True

    def __post_init__(self) -> None:
        if self.template not in TEMPLATES:
            raise ValueError(f"prompt template {self.template!r} is unknown; choose one of {TEMPLATES}")
        if self.output_format not in OUTPUT_FORMATS:
            raise ValueError(f"prompt output_format {self.output_format!r} is unknown; choose one of {OUTPUT_FORMATS}")
        if (self.template == "balrog") != (self.output_format in BALROG_AGENTS):
            raise ValueError(
                f"prompt output_format {self.output_format!r} does not go with template {self.template!r}: "
                f"the balrog template takes one of BALROG's agents {BALROG_AGENTS}, and only it does"
            )
        for name in ("history", "images"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 64:
                raise ValueError(f"prompt {name}={value!r} must be an int in 0..64")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BalrogDemo:
    """One demonstration episode for BALROG's few-shot agent, as BALROG's ``InContextDataset``
    feeds it (``balrog/dataset.py``): the ``long_term_context`` of each observation (at reset and
    after each action, up to the end of the episode) and the actions in between.

    Attributes:
        observations: ``len(actions) + 1`` texts.
        actions: the actions, as the env's action strings.
        source: where it came from (env id and seed), for the run's records.
    """

    observations: tuple[str, ...]
    actions: tuple[str, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.observations) != len(self.actions) + 1:
            raise ValueError(f"a demonstration has one more observation than actions, not {len(self.observations)} and {len(self.actions)}")

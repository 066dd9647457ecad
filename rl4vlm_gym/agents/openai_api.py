"""Any OpenAI-compatible chat endpoint as an agent: vLLM, hosted APIs, or :mod:`.serve`.

Built on the official ``openai`` client, which retries failed requests with exponential backoff
and enforces the timeout; images go as base64 PNG data URLs. Replies without a text, or that are
not chat completions at all, raise :class:`AgentError` naming the endpoint and the problem (the
harness records the episode as failed and goes on).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rl4vlm_gym.agents.base import AgentUnavailableError, Completion, ModelAgent, Usage
from rl4vlm_gym.prompts import Message, PromptConfig, to_openai

__all__ = ["AgentError", "OpenAIAgent"]


_UNSET: Any = object()  # an argument not given: the prompt's protocol decides


class AgentError(RuntimeError):
    """The model endpoint failed or answered something that is not a reply."""


class EndpointUnavailableError(AgentError, AgentUnavailableError):
    """The endpoint cannot be reached, or did not answer within the timeout after the retries: an
    evaluation stops on it (and resumes when run again) rather than failing every episode."""


class OpenAIAgent(ModelAgent):
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Args:
        model: the model name the endpoint serves.
        base_url: e.g. ``http://localhost:8000/v1``; default ``$OPENAI_BASE_URL`` (else OpenAI's).
        api_key: default ``$OPENAI_API_KEY``, else ``"EMPTY"`` (local servers ignore it).
        prompt: the prompt configuration.
        max_tokens: the reply's budget; default 256, BALROG's 8192 under the ``balrog`` template.
        temperature: sampling temperature (0: greedy); default 0, BALROG's 1.0 under the ``balrog``
            template.
        seed: passed to endpoints that honour it (``None``: not sent); default 0, none under the
            ``balrog`` template (BALROG sends none, so equal prompts get independent replies).
        timeout: seconds per request.
        max_retries: retries after a failed request (with exponential backoff).
        concurrency: requests in flight at once in :meth:`act_batch`.
    """

    name = "openai"
    SAMPLING_ARGS = {"temperature": "temperature", "max_tokens": "max_tokens"}

    @classmethod
    def protocol_defaults(cls, prompt: PromptConfig | None) -> dict[str, Any]:
        defaults = super().protocol_defaults(prompt)
        return {**defaults, "seed": None} if defaults else defaults

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        prompt: PromptConfig | Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        seed: Any = _UNSET,
        timeout: float = 60.0,
        max_retries: int = 3,
        concurrency: int = 4,
    ) -> None:
        super().__init__(prompt)
        from openai import OpenAI

        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.client = OpenAI(
            base_url=self.base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            timeout=timeout,
            max_retries=max_retries,
        )
        defaults = {"max_tokens": 256, "temperature": 0.0, "seed": 0, **self.protocol_defaults(self.prompt)}
        max_tokens = defaults["max_tokens"] if max_tokens is None else max_tokens
        temperature = defaults["temperature"] if temperature is None else temperature
        seed = defaults["seed"] if seed is _UNSET else seed
        self.settings = {"max_tokens": int(max_tokens), "temperature": float(temperature), "seed": seed}
        self.concurrency = max(1, int(concurrency))
        self._png_level = None if self.prompt.template == "balrog" else 1  # BALROG's PNG bytes: Pillow's default

    def complete(self, conversations: Sequence[list[Message]]) -> list[Completion]:
        if len(conversations) == 1:
            return [self._request(conversations[0])]
        with ThreadPoolExecutor(min(self.concurrency, len(conversations))) as pool:
            return list(pool.map(self._request, conversations))

    def _request(self, conversation: list[Message]) -> Completion:
        import openai

        where = f"{self.base_url or 'https://api.openai.com/v1'} (model {self.model!r})"
        try:
            settings = {k: v for k, v in self.settings.items() if v is not None}
            reply = self.client.chat.completions.create(model=self.model, messages=to_openai(conversation, self._png_level), **settings)
        except openai.APITimeoutError:
            raise EndpointUnavailableError(
                f"{where} did not answer within {self.client.timeout} s ({self.client.max_retries} retries)"
            ) from None
        except openai.APIConnectionError as err:
            raise EndpointUnavailableError(f"cannot reach {where}: {err}") from None
        except openai.APIStatusError as err:
            raise AgentError(f"{where} answered HTTP {err.status_code}: {err.message}") from None
        except openai.APIError as err:  # a 200 whose body is not a chat completion, among others
            raise AgentError(f"{where} failed: {err}") from None
        choices = getattr(reply, "choices", None)
        if not choices:
            raise AgentError(f"{where} answered without choices: {str(reply)[:200]}")
        content = getattr(getattr(choices[0], "message", None), "content", None)
        if not isinstance(content, str):
            raise AgentError(f"{where} answered a message whose content is {type(content).__name__}, not text")
        usage = getattr(reply, "usage", None)
        return Completion(content, Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model": self.model, "base_url": self.base_url, **self.settings}

    def close(self) -> None:
        self.client.close()

"""A small OpenAI-compatible chat server for a local Hugging Face model.

It stands in for vLLM where there is no GPU (and is what the HTTP agent is tested against):
``POST /v1/chat/completions`` with text and base64 ``image_url`` parts, ``GET /v1/models`` and
``GET /health``. It binds 127.0.0.1 on an ephemeral port, generates one request at a time, and
answers malformed requests with HTTP 400 and an OpenAI-style error naming the problem::

    with ModelServer() as server:            # the tiny model by default
        agent = OpenAIAgent(model=server.model_name, base_url=server.url)
"""

from __future__ import annotations

import base64
import binascii
import io
import threading
import time
from typing import Any

import numpy as np
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

from rl4vlm_gym.agents.hf import generate
from rl4vlm_gym.prompts import Message

__all__ = ["BadRequest", "ModelServer", "make_app"]


class BadRequest(ValueError):
    """A chat request the server cannot answer; the message says why."""


def _neutral(messages: Any) -> list[Message]:
    """OpenAI chat messages back to the neutral form (images decoded to arrays)."""
    from PIL import Image

    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    out: list[Message] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise BadRequest(f"messages[{i}] must be an object with role system, user or assistant")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise BadRequest(f"messages[{i}].content must be a string or a list of parts")
        parts = []
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            elif kind == "image_url":
                url = (part.get("image_url") or {}).get("url", "") if isinstance(part.get("image_url"), dict) else ""
                if not url.startswith("data:image/") or ";base64," not in url:
                    raise BadRequest(f"messages[{i}].content[{j}]: only base64 data URLs are accepted (no downloads)")
                try:
                    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1], validate=True))).convert("RGB")
                except (binascii.Error, OSError) as err:
                    raise BadRequest(f"messages[{i}].content[{j}]: not a readable image ({err})") from None
                parts.append({"type": "image", "image": np.asarray(image)})
            else:
                raise BadRequest(f"messages[{i}].content[{j}] must be a text or image_url part")
        out.append({"role": message["role"], "content": parts})
    return out


def make_app(model: Any, processor: Any, model_name: str) -> Flask:
    """The Flask app serving ``model``."""
    app = Flask(__name__)
    lock = threading.Lock()  # one generate at a time: the model is not thread-safe

    def error(message: str, status: int = 400) -> Any:
        return jsonify({"error": {"message": message, "type": "invalid_request_error", "code": status}}), status

    @app.get("/health")
    def health() -> Any:
        return {"status": "ok"}

    @app.get("/v1/models")
    def models() -> Any:
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "rl4vlm-gym"}]}

    @app.post("/v1/chat/completions")
    def chat() -> Any:
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            return error("the body must be a JSON object")
        try:
            conversation = _neutral(body.get("messages"))
            max_tokens = int(next((body[k] for k in ("max_tokens", "max_completion_tokens") if body.get(k) is not None), 64))
            temperature = float(body["temperature"] if body.get("temperature") is not None else 0.0)
            seed = body.get("seed")
            if not 1 <= max_tokens <= 4096 or not 0 <= temperature <= 5:
                raise BadRequest("max_tokens must be in 1..4096 and temperature in 0..5")
        except BadRequest as err:
            return error(str(err))
        except (TypeError, ValueError) as err:
            return error(f"bad parameter: {err}")
        with lock:
            completion = generate(
                model, processor, [conversation], max_new_tokens=max_tokens, temperature=temperature,
                seed=None if seed is None else int(seed),
            )[0]  # fmt: skip
        usage = completion.usage
        return {
            "id": f"chatcmpl-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": completion.text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
            },
        }

    return app


class ModelServer:
    """Serve a model on ``127.0.0.1:<free port>`` in a daemon thread.

    Args:
        model: a path or hub id; ``None`` for the tiny offline Qwen2-VL.
        device: ``"cpu"`` or ``"cuda"``.
        model_name: the name clients ask for (default: ``model``, or ``"tiny-qwen2-vl"``).
        port: the port on 127.0.0.1 (0: a free one).
    """

    def __init__(self, model: str | None = None, device: str = "cpu", model_name: str | None = None, port: int = 0) -> None:
        from rl4vlm_gym.agents.tiny import default_tiny_model, load_vlm

        vlm, processor = load_vlm(model if model is not None else default_tiny_model(), device=device)
        self.model_name = model_name or (str(model) if model is not None else "tiny-qwen2-vl")
        self._server = make_server("127.0.0.1", port, make_app(vlm, processor, self.model_name), threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="rl4vlm-model-server", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving; safe to call twice."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

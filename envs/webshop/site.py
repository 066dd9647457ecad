"""The web shop's server: a Flask app on 127.0.0.1, on an ephemeral port, in a daemon thread.

The app is a thin view of :mod:`~rl4vlm_gym.envs.webshop.pages`: it parses the URL into a
:class:`~rl4vlm_gym.envs.webshop.pages.Route`, asks the env for that page and draws it with the
``page.html`` template (Jinja2 escapes every catalog string). Product pictures are drawn on
request. Each env owns one server, so envs side by side (threads, processes, ``pytest -n
auto``) never share a port or a state.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from rl4vlm_gym.extras import require

require("webshop", "WebShop's browser renderer (rl4vlm/WebShop-Browser-v2)")  # before importing it: an error naming the extra

from flask import Flask, Response, abort, render_template, request, send_from_directory
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from rl4vlm_gym.envs.webshop.pages import Page, Route

__all__ = ["ShopServer", "create_app"]

logger = logging.getLogger(__name__)

_HERE = Path(__file__).resolve().parent
_IMAGE_SIDES = range(16, 1025)
_POLL_S = 0.02


class _QuietHandler(WSGIRequestHandler):
    def log(self, type: str, message: str, *args: object) -> None:  # noqa: A002 - werkzeug's signature
        pass  # one line per request would flood the training logs


def create_app(
    page: Callable[[Route], Page | None],
    image: Callable[[str, tuple[tuple[str, str], ...], int], bytes | None],
    theme: str = "default",
) -> Flask:
    """The shop's Flask app: ``page(route)`` gives a page (``None``: 404), ``image(asin, options,
    side)`` a PNG. ``theme`` other than ``default`` adds the stylesheet ``static/<theme>.css``
    after ``style.css`` (the held-out theme of the visual axis); ``image`` draws in the same theme."""
    if not (_HERE / "static" / f"{theme}.css").is_file() and theme != "default":
        raise ValueError(f"theme={theme!r} has no stylesheet static/{theme}.css")
    app = Flask(__name__, template_folder=str(_HERE / "templates"), static_folder=str(_HERE / "static"))
    fonts = resources.files("rl4vlm_gym") / "assets" / "fonts"

    def show(route: Route | None) -> str:
        shown = page(route) if route is not None else None
        if shown is None:
            abort(404)
        ids = {action: i for i, action in enumerate(shown.actions)}
        return render_template("page.html", page=shown, ids=ids, theme=theme)

    @app.get("/")
    @app.get("/results")
    @app.get("/item/<asin>")
    @app.get("/item/<asin>/<sub>")
    @app.get("/done/<asin>")
    def view(**_: str) -> str:
        return show(Route.from_url(request.full_path))

    @app.get("/image/<asin>.png")
    def product_image(asin: str) -> Response:
        side = request.args.get("size", "256")
        if not side.isdigit() or int(side) not in _IMAGE_SIDES:
            abort(400)
        options = tuple(tuple(v.split(":", 1)) for v in request.args.getlist("opt") if ":" in v)
        png = image(asin, options, int(side))  # type: ignore[arg-type]
        if png is None:
            abort(404)
        response = Response(png, mimetype="image/png")
        response.cache_control.max_age = 3600
        return response

    @app.get("/fonts/<name>")
    def font(name: str) -> Response:
        with resources.as_file(fonts) as folder:
            return send_from_directory(folder, name, max_age=3600)

    @app.get("/health")
    def health() -> str:
        return "ok"

    return app


class ShopServer:
    """Serves ``app`` on ``127.0.0.1:<ephemeral port>`` from a daemon thread until ``close()``."""

    def __init__(self, app: Flask) -> None:
        self._server: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler)
        self.port = self._server.server_port
        # shutdown() waits for the loop's next poll: 0.5 s by default, at every close and restart.
        serve = lambda: self._server.serve_forever(poll_interval=_POLL_S)  # noqa: E731
        self._thread = threading.Thread(target=serve, name=f"webshop-server-{self.port}", daemon=True)
        self._thread.start()

    def url(self, route: Route) -> str:
        return f"http://127.0.0.1:{self.port}{route.path()}"

    def alive(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        """Stop serving and free the port; safe to call twice."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

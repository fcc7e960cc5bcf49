"""The review web app: one page and a small JSON API, on loopback, behind a random token.

Plain HTML, CSS and JavaScript shipped in the package (no build step, nothing fetched from a CDN), so it
works offline. The token travels in the page's URL and in a header on every API call; a request for
another host name is refused too, so a web page elsewhere cannot reach the API through DNS rebinding.
"""

from __future__ import annotations

import secrets
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import UserError
from .session import SCORE_FILTERS, STATUSES, NotInQueue, ReviewSession

LOOPBACK = ("127.0.0.1", "localhost", "::1")
ASSETS = {"review.js": "text/javascript", "review.css": "text/css"}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def create_app(session: ReviewSession, token: str | None = None) -> Starlette:
    """The app serving ``session``; ``app.state.token`` is the token a URL must carry."""
    token = token or secrets.token_urlsafe(24)

    def allowed(request: Request) -> bool:
        host = request.url.hostname or ""
        given = request.headers.get("x-review-token") or request.query_params.get("token") or ""
        return host in LOOPBACK and secrets.compare_digest(given.encode(), token.encode())

    def guarded(handler):
        async def endpoint(request: Request) -> Response:
            if not allowed(request):
                return JSONResponse({"error": "forbidden: open the URL that `sciqag review` printed"}, 403)
            try:
                return await handler(request)
            except NotInQueue as e:
                return JSONResponse({"error": str(e)}, 404)
            except ValueError as e:  # a UserError, or a bad number in the query
                return JSONResponse({"error": str(e)}, 400)

        return endpoint

    async def page(request: Request) -> Response:
        return Response(_asset("review.html"), media_type="text/html")

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return Response(status_code=404)
        return Response(_asset(name), media_type=ASSETS[name], headers={"Cache-Control": "no-cache"})

    async def show(request: Request) -> Response:
        p = request.query_params
        return JSONResponse(session.show(p.get("reviewer", ""), int(p.get("i", 0))))

    async def find(request: Request) -> Response:
        p = request.query_params
        status, score = p.get("status", "all"), p.get("score", "all")
        if status not in STATUSES or score not in SCORE_FILTERS:
            raise UserError(f"status is one of {STATUSES}, score one of {SCORE_FILTERS}")
        step = -1 if p.get("step") == "-1" else 1
        i = session.find(p.get("reviewer", ""), int(p.get("from", 0)), step, status, score)
        return JSONResponse({"i": i})

    async def save(request: Request) -> Response:
        body = await request.json()
        if not isinstance(body, dict):
            raise UserError("send a JSON object")
        return JSONResponse(session.save(body.get("reviewer", ""), str(body.get("pair_id")), body.get("changes")))

    app = Starlette(
        routes=[
            Route("/", guarded(page)),
            Route("/static/{name}", asset),
            Route("/api/pair", guarded(show)),
            Route("/api/find", guarded(find)),
            Route("/api/review", guarded(save), methods=["POST"]),
        ]
    )
    app.state.token = token
    return app

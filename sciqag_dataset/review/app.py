"""The review web app: one page and a small JSON API, on loopback, behind a random token.

Plain HTML, CSS and JavaScript shipped in the package (no build step, nothing fetched from a CDN), so it
works offline. The token travels in the page's URL and in a header on every API call; a request for
another host name is refused too, so a web page elsewhere cannot reach the API through DNS rebinding.
"""

from __future__ import annotations

import secrets
from importlib import resources

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.review.session import ASKED_FROM, SCORE_FILTERS, STATUSES, NotInQueue, ReviewSession

LOOPBACK = ("127.0.0.1", "localhost", "::1")
ASSETS = {"review.js": "text/javascript", "review.css": "text/css"}


class ReviewBody(BaseModel):
    """The body of ``POST /api/review``, by type only (strict: no coercion); ``check_changes`` then checks the
    values (scores 1-3, known fields, text lengths)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    reviewer: StrictStr = ""
    pair_id: StrictStr
    changes: dict[StrictStr, StrictBool | StrictInt | StrictStr | None]


def body_error(exc: ValidationError) -> str:
    """The first problem of a refused body, on one line."""
    err = exc.errors()[0]
    loc = err["loc"]
    if err["type"] == "json_invalid":
        return f"the body is not JSON the review API reads ({err['msg']})"
    if loc[:1] == ("changes",) and len(loc) > 2:  # a value that none of the union's types takes
        return f"changes.{loc[1]} must be a whole number, true/false, text or null"
    return f"{'.'.join(map(str, loc)) or 'body'}: {err['msg']}"


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
        status, score, asked_from = p.get("status", "all"), p.get("score", "all"), p.get("asked_from", "all")
        if status not in STATUSES or score not in SCORE_FILTERS or asked_from not in ASKED_FROM:
            raise UserError(
                f"status is one of {STATUSES}, score one of {SCORE_FILTERS}, asked_from one of {ASKED_FROM}"
            )
        step = -1 if p.get("step") == "-1" else 1
        i = session.find(p.get("reviewer", ""), int(p.get("from", 0)), step, status, score, asked_from)
        return JSONResponse({"i": i})

    async def save(request: Request) -> Response:
        try:
            body = ReviewBody.model_validate_json(await request.body())
        except ValidationError as e:
            raise UserError(body_error(e)) from None
        return JSONResponse(session.save(body.reviewer, body.pair_id, body.changes))

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

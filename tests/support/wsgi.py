"""The Chalice app behind a WSGI interface, through chalice's own test gateway: for the tools that speak
WSGI (schemathesis) and for a real HTTP server in one thread of the test process (a browser's page)."""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def wsgi_app(app: Any) -> WsgiApp:
    """Every WSGI request goes to the Chalice `app` through the gateway `make run` serves it with, which
    answers like API Gateway (an unknown path 404 in our error body); chalice's test client would fail on a
    body-less answer, e.g. to OPTIONS."""
    from chalice.config import Config
    from chalice.local import LocalGatewayException

    from local.gateway import ApiGatewayLikeGateway

    gateway = ApiGatewayLikeGateway(app, Config(chalice_stage="test"))

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = quote(environ.get("PATH_INFO", "/"), safe="/:@!$&'()*+,;=%~")
        if environ.get("QUERY_STRING"):
            path += "?" + environ["QUERY_STRING"]
        headers = {
            name[5:].replace("_", "-").lower(): value for name, value in environ.items() if name.startswith("HTTP_")
        }
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        if body:  # wsgiref makes up `text/plain` for a request that has no Content-Type
            headers.update({"content-type": environ.get("CONTENT_TYPE", ""), "content-length": str(length)})
        try:
            answer = gateway.handle_request(method=environ["REQUEST_METHOD"], path=path, headers=headers, body=body)
        except LocalGatewayException as refused:
            answer = {"statusCode": refused.CODE, "headers": refused.headers, "body": refused.body or b""}
        content = answer.get("body") or b""
        if answer.get("isBase64Encoded"):
            content = base64.b64decode(content)
        elif isinstance(content, str):
            content = content.encode()
        status = HTTPStatus(answer["statusCode"])
        start_response(
            f"{status.value} {status.phrase}",
            [
                (name, str(value))
                for name, value in (answer.get("headers") or {}).items()
                if name.lower() != "content-length"
            ]
            + [("Content-Length", str(len(content)))],
        )
        return [content]

    return application


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
        pass


@contextmanager
def serving(application: WsgiApp) -> Iterator[str]:
    """`application` on 127.0.0.1 at a free port, in a thread, while the block runs; yields its base URL."""
    server: WSGIServer = make_server("127.0.0.1", 0, application, handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()

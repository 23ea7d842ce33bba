"""`chalice local` made to answer like the deployed API Gateway, in our error body.

Chalice's local server answers a path no route has with 403 and a body that echoes the whole
`Authorization` header (the bearer token), and its HTTP layer answers malformed requests (too many or too
long headers, an unknown method, a broken request line) with HTML pages. Deployed, the gateway responses
of infra/template.json answer those in our error body, an unknown path with 404. This server does the
same locally: everything else is Chalice's own local server, running the app as `chalice local` does.

    python local/gateway.py --host 127.0.0.1 --port 8000 --stage dev
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from chalice.app import Chalice
from chalice.config import Config
from chalice.local import (
    ChaliceRequestHandler,
    CustomLocalChalice,
    LocalChalice,
    LocalDevServer,
    LocalGateway,
    LocalGatewayException,
    MatchResult,
    RouteMatcher,
    ThreadedHTTPServer,
)

ROOT = Path(__file__).resolve().parent.parent
MAX_ECHOED_PATH = 200
"""Characters of an unknown path that its 404 message repeats."""

MESSAGES = {
    400: ("request.malformed_http", "The request is not well-formed HTTP"),
    408: ("request.timeout", "The request was not received in time"),
    413: ("request.too_large", "The request is too large"),
    414: ("request.uri_too_long", "The request line is too long"),
    431: ("request.headers_too_large", "The request has too many headers, or one that is too long"),
    501: ("request.method_not_supported", "This HTTP method is not supported"),
    505: ("request.http_version_not_supported", "This HTTP version is not supported"),
}
"""What the HTTP layer refuses by itself, without echoing any of the request."""


def error_body(status: int, code: str, message: str, request_id: str) -> bytes:
    import json

    return json.dumps(
        {"httpStatus": status, "code": code, "message": message, "requestId": request_id}, separators=(",", ":")
    ).encode()


def _request_id() -> str:
    from chalicelib.core.ids import new_locator

    return new_locator()


class RouteNotFound(LocalGatewayException):
    """What API Gateway answers (through the MISSING_AUTHENTICATION_TOKEN gateway response) for a method and
    path no route has."""

    CODE = 404

    def __init__(self, method: str, path: str):
        request_id = _request_id()
        shown = path.split("?", 1)[0]
        if len(shown) > MAX_ECHOED_PATH:
            shown = shown[:MAX_ECHOED_PATH] + "..."
        super().__init__(
            {"Content-Type": "application/json", "X-Request-Id": request_id},
            error_body(404, "route.not_found", f"No route for {method[:20]} {shown}", request_id),
        )


class ApiGatewayLikeRoutes(RouteMatcher):
    """Chalice's route matcher reading the path as API Gateway does. Chalice's splits it with `urlparse`, which
    takes a last segment's `;params` off (RFC 1808): `/transactions/segments/%3B%20` matched
    `/transactions/{locator}` with `segments`, where the gateway gives `{segmentLocator}` the value `; `."""

    def match_route(self, url: str) -> MatchResult:
        parsed = urlsplit(url)
        path = parsed.path
        if path != "/" and path.endswith("/"):  # the gateway drops a trailing slash but the root's
            path = path[:-1]
        parts = path.split("/")
        for route_url in self.route_urls:
            route_parts = route_url.split("/")
            if len(route_parts) != len(parts):
                continue
            captured = {}
            for given, part in zip(parts, route_parts):
                if part.startswith("{") and part.endswith("}"):
                    captured[part[1:-1]] = given
                elif given != part:
                    break
            else:
                return MatchResult(route_url, captured, parse_qs(parsed.query, keep_blank_values=True))
        raise ValueError(f"No matching route found for: {url}")


class ApiGatewayLikeGateway(LocalGateway):
    def __init__(self, app_object: Chalice, config: Config):
        super().__init__(app_object, config)
        self.event_converter._route_matcher = ApiGatewayLikeRoutes(list(app_object.routes))

    def _generate_lambda_event(self, method: str, path: str, headers: Any, body: bytes | None) -> Any:
        try:
            return super()._generate_lambda_event(method, path, headers, body)
        except ValueError:  # Chalice's route matcher: no route for this path
            raise RouteNotFound(method, path) from None


class ApiGatewayLikeHandler(ChaliceRequestHandler):
    """Chalice's request handler with the gateway above, and the HTTP layer's errors in our body."""

    def __init__(self, request: Any, client_address: Any, server: Any, app_object: Chalice, config: Config):
        self.local_gateway = ApiGatewayLikeGateway(app_object, config)
        BaseHTTPRequestHandler.__init__(self, request, client_address, server)  # handles the request

    def _generic_handle(self) -> None:
        length = self.headers.get("content-length", "0")
        if not length.strip().isdigit():
            self.send_error(400)
            return
        super()._generic_handle()

    # TRACE and CONNECT are HTTP methods no route has: the app answers them 405 as any method a path lacks
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _generic_handle

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Instead of http.server's HTML page (which repeats the offending method or version)."""
        request_id = _request_id()
        error_code, text = MESSAGES.get(code, (f"request.{HTTPStatus(code).name.lower()}", HTTPStatus(code).phrase))
        body = error_body(code, error_code, text, request_id)
        self.log_error("code %d, message %s", code, text)
        if self.request_version == self.default_request_version:  # not parsed: HTTP/0.9 would send no status
            self.request_version = "HTTP/1.0"
        self.send_response(code, HTTPStatus(code).phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Request-Id", request_id)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if getattr(self, "command", None) != "HEAD":
            self.wfile.write(body)


class QueueingServer(ThreadedHTTPServer):
    """Chalice's threaded server with a listen backlog for a burst: socketserver's is 5, and the kernel
    reset the connections of a burst beyond it (5 to 7 of 20 parallel sign-ins) where API Gateway queues
    them. The kernel caps it at net.core.somaxconn."""

    request_queue_size = 1024


def create_server(app: Chalice, config: Config, host: str, port: int) -> LocalDevServer:
    """The local server for `app`; like chalice.local.create_local_server, with ApiGatewayLikeHandler."""
    CustomLocalChalice.__bases__ = (LocalChalice, app.__class__)
    app.__class__ = CustomLocalChalice
    return LocalDevServer(app, config, host, port, handler_cls=ApiGatewayLikeHandler, server_cls=QueueingServer)


def install_faults(environ: Any) -> Any:
    """The fault plan PAS_FAULT_SEED / PAS_FAULT_RATE ask for (DECISIONS.md "Running it"), on the DynamoDB client
    the app's requests use; None when the rate is 0."""
    from chalicelib.storage import clients
    from local.faults import GATEWAY_STREAM, install_from_environment

    return install_from_environment(environ, clients.dynamodb(), GATEWAY_STREAM, "chalice local")


def main(argv: list[str] | None = None) -> None:
    """What `chalice local --no-autoreload` does, with this server."""
    from chalice.cli.factory import CLIFactory
    from chalice.deploy.validate import validate_routes

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--stage", default="dev")
    options = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    os.environ["AWS_CHALICE_CLI_MODE"] = "true"
    factory = CLIFactory(str(ROOT), environ=os.environ)
    config = factory.create_config_obj(chalice_stage_name=options.stage)
    app = config.chalice_app
    validate_routes(app.routes)
    install_faults(os.environ)
    from chalicelib.documents import rendering
    from local.tenant_functions import use_local_invoker

    invoker = use_local_invoker()  # PAS_PLUGIN_RUNNER=lambda: tenant code in the emulated Lambda
    rendering.start_warm_renderers()  # the first render is warm too (none on the lambda runner)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # local/run.py's stop: at exit the invoker's folders
    # and the warm renderers go too
    try:
        create_server(app, config, options.host, options.port).serve_forever()
    finally:
        if invoker is not None:
            invoker.close()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()

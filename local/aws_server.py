"""The emulated AWS of `make run`: moto's server, one request at a time, each change on disk before its answer.

moto's models are not thread-safe (a TransactWriteItems that copies a table while another request adds
to it fails with "dictionary changed size during iteration"), and moto is in memory, so every request
runs under the state's lock. SQS is left out: the worker's long polls wait there for a second at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

from local.durable_state import DurableState
from local.moto_lambda import never_reused_versions


def _is_sqs(environ: dict[str, Any]) -> bool:
    return "/sqs/aws4_request" in environ.get("HTTP_AUTHORIZATION", "") or environ.get(
        "HTTP_X_AMZ_TARGET", ""
    ).startswith("AmazonSQS.")


class SerialisedMoto:
    """moto's WSGI application behind `state.lock`; the changes a request made are journalled, and on disk,
    before its answer leaves."""

    def __init__(self, state: DurableState):
        self.state = state
        self.moto = DomainDispatcherApplication(create_backend_app)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if _is_sqs(environ):
            return self.moto(environ, start_response)
        with self.state.lock:
            chunks = self.moto(environ, start_response)
            try:
                body = b"".join(chunks)
            finally:
                if hasattr(chunks, "close"):
                    chunks.close()
            position = self.state.record_changes()
        if position is not None:
            self.state.wait_until_durable(position)
        return [body]


class EmulatedAws:
    """SerialisedMoto on host:port (bound at construction; the socket may reuse a port in TIME_WAIT)."""

    def __init__(self, host: str, port: int, state: DurableState):
        never_reused_versions()
        self._server = make_server(host, port, SerialisedMoto(state), threaded=True, request_handler=MotoRequestHandler)
        # stop() waits for the serving loop to notice, which it does every poll interval
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="moto", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

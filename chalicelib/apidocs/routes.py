"""The API described: the OpenAPI document generated from the route table, and a docs page to read it.

Both need no token. The page is Swagger UI from a packaged bundle (swagger-ui-bundle-v2), served by the
service itself, so it works offline: it loads nothing from another host. Each answer is built once per
process and sent gzip-compressed when the request takes it, with an ETag (`Static`): the description is
1.7 MB of JSON (about 150 KB compressed), the script 1.4 MB.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, TypeVar

from chalice import Blueprint

from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.responses import Static, to_json

if TYPE_CHECKING:
    from chalicelib.apidocs import openapi
else:
    (openapi,) = lazy_modules("chalicelib.apidocs", "openapi")

bp = Blueprint(__name__)
S = TypeVar("S", bound=Static)

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>PAS API</title>
  <link rel="stylesheet" type="text/css" href="docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/swagger-ui-bundle.js" charset="UTF-8"></script>
  <script>
    window.ui = SwaggerUIBundle({url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true,
                                 defaultModelsExpandDepth: 0, docExpansion: "list"});
  </script>
</body>
</html>
"""


class Description(Static):
    media_type = "application/json"


class Html(Static):
    media_type = "text/html; charset=utf-8"


class Stylesheet(Static):
    media_type = "text/css; charset=utf-8"


class Script(Static):
    media_type = "text/javascript; charset=utf-8"


@bp.route("/openapi.json", methods=["GET"])
@endpoint(public=True)
def fetch_openapi_description() -> Description:
    """The OpenAPI 3.1 description of every operation of the service"""
    return _description()


@functools.cache
def _description() -> Description:
    return Description(to_json(openapi.document(bp.current_app.routes)))


@bp.route("/docs", methods=["GET"])
@endpoint(public=True)
def fetch_docs_page() -> Html:
    """The API's documentation page (Swagger UI over `/openapi.json`)"""
    return _page()


@functools.cache
def _page() -> Html:
    return Html(PAGE)


@bp.route("/docs/swagger-ui.css", methods=["GET"])
@endpoint(public=True)
def fetch_docs_stylesheet() -> Stylesheet:
    """The documentation page's stylesheet"""
    return _asset(Stylesheet, "swagger-ui.css")


@bp.route("/docs/swagger-ui-bundle.js", methods=["GET"])
@endpoint(public=True)
def fetch_docs_script() -> Script:
    """The documentation page's script (Swagger UI)"""
    return _asset(Script, "swagger-ui-bundle.js")


@functools.cache
def _asset(kind: type[S], name: str) -> S:
    from swagger_ui_bundle import swagger_ui_path

    return kind((swagger_ui_path / name).read_text(encoding="utf-8"))

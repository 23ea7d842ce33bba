"""The API described: the OpenAPI document generated from the route table, and a docs page to read it.

Both need no token. The page is Swagger UI from a packaged bundle (swagger-ui-bundle-v2), served by the
service itself, so it works offline: it loads nothing from another host.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.responses import Binary

if TYPE_CHECKING:
    from chalicelib.apidocs import openapi
else:
    (openapi,) = lazy_modules("chalicelib.apidocs", "openapi")

bp = Blueprint(__name__)

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


class Html(Binary):
    media_type = "text/html; charset=utf-8"


class Stylesheet(Binary):
    media_type = "text/css; charset=utf-8"


class Script(Binary):
    media_type = "text/javascript; charset=utf-8"


@bp.route("/openapi.json", methods=["GET"])
@endpoint(public=True)
def fetch_openapi_description() -> dict[str, Any]:
    """The OpenAPI 3.1 description of every operation of the service"""
    return _document()


@functools.cache
def _document() -> dict[str, Any]:
    return openapi.document(bp.current_app.routes)


@bp.route("/docs", methods=["GET"])
@endpoint(public=True)
def fetch_docs_page() -> Html:
    """The API's documentation page (Swagger UI over `/openapi.json`)"""
    return Html(PAGE)


@bp.route("/docs/swagger-ui.css", methods=["GET"])
@endpoint(public=True)
def fetch_docs_stylesheet() -> Stylesheet:
    """The documentation page's stylesheet"""
    return Stylesheet(_asset("swagger-ui.css"))


@bp.route("/docs/swagger-ui-bundle.js", methods=["GET"])
@endpoint(public=True)
def fetch_docs_script() -> Script:
    """The documentation page's script (Swagger UI)"""
    return Script(_asset("swagger-ui-bundle.js"))


@functools.cache
def _asset(name: str) -> str:
    from swagger_ui_bundle import swagger_ui_path

    return (swagger_ui_path / name).read_text(encoding="utf-8")

"""The API described: the OpenAPI document generated from the route table, and a docs page to read it.

Both need no token. The page is Swagger UI from a packaged bundle (swagger-ui-bundle-v2), served by the
service itself, so it works offline: it loads nothing from another host. Each answer is built once per
process and sent gzip-compressed when the request takes it, with an ETag (`Static`): the description is
0.9 MB of JSON (about 60 KB compressed), the script 1.5 MB.

The page reads the description one domain (tag) at a time, `/docs/openapi/{tag}`, chosen in its top bar,
the whole one last: Swagger UI 5 spends seconds a megabyte resolving an OpenAPI 3.1 document, so the whole
description took 10-18 s to become usable, one domain takes about one (tests/api/apidocs/test_docs_page.py
measures it against an empty page).
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, TypeVar

from chalice import Blueprint

from chalicelib.core import codes
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
  <script src="docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
  <script>
    window.ui = SwaggerUIBundle({urls: URLS, dom_id: "#swagger-ui", deepLinking: true,
                                 presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
                                 layout: "StandaloneLayout", defaultModelsExpandDepth: 0, docExpansion: "list"});
  </script>
</body>
</html>
"""
WHOLE = "all operations (slow to show)"
"""The top bar's last entry: the whole description."""


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
    return Description(to_json(_document()))


@bp.route("/docs/openapi/{tag}", methods=["GET"])
@endpoint(public=True)
def fetch_openapi_section(tag: str) -> Description:
    """The OpenAPI 3.1 description of one domain's operations (the docs page reads one at a time)"""
    section = _section(tag)
    if section is None:
        raise codes.ROUTE_NOT_FOUND(f"No domain is tagged {tag!r}")
    return section


@functools.cache
def _document() -> dict[str, Any]:
    return openapi.document(bp.current_app.routes)


@functools.cache
def _sections() -> dict[str, dict[str, Any]]:
    return openapi.sections(_document())


@functools.cache
def _section(tag: str) -> Description | None:
    section = _sections().get(tag)
    return None if section is None else Description(to_json(section))


@bp.route("/docs", methods=["GET"])
@endpoint(public=True)
def fetch_docs_page() -> Html:
    """The API's documentation page (Swagger UI over `/openapi.json`)"""
    return _page()


@functools.cache
def _page() -> Html:
    urls = [{"url": f"docs/openapi/{tag}", "name": tag} for tag in _sections()]
    return Html(PAGE.replace("URLS", json.dumps([*urls, {"url": "openapi.json", "name": WHOLE}])))


@bp.route("/docs/swagger-ui.css", methods=["GET"])
@endpoint(public=True)
def fetch_docs_stylesheet() -> Stylesheet:
    """The documentation page's stylesheet"""
    return _asset(Stylesheet, "swagger-ui.css")


@bp.route("/docs/swagger-ui-standalone-preset.js", methods=["GET"])
@endpoint(public=True)
def fetch_docs_top_bar_script() -> Script:
    """The documentation page's top bar (Swagger UI's standalone preset: the domain chooser)"""
    return _asset(Script, "swagger-ui-standalone-preset.js")


@bp.route("/docs/swagger-ui-bundle.js", methods=["GET"])
@endpoint(public=True)
def fetch_docs_script() -> Script:
    """The documentation page's script (Swagger UI)"""
    return _asset(Script, "swagger-ui-bundle.js")


_assets: dict[str, Static] = {}
"""The files of the docs page, built once (a Static keeps its compressed body)."""


def _asset(kind: type[S], name: str) -> S:
    asset = _assets.get(name)
    if not isinstance(asset, kind):
        from swagger_ui_bundle import swagger_ui_path

        asset = _assets[name] = kind((swagger_ui_path / name).read_text(encoding="utf-8"))
    return asset

"""`GET /docs` in a real headless browser (Debian's chromium, which `make test` installs): the page
renders every operation of `/openapi.json`, with every other host unreachable, so it needs no CDN."""
from __future__ import annotations

import json
import shutil
import subprocess

from tests.support.wsgi import serving, wsgi_app

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                  "--virtual-time-budget=30000", "--dump-dom"]


def test_the_docs_page_lists_every_operation_offline(app, api, tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "make test installs Debian's chromium (make browser); run it once"
    operations = [(op["tags"][0], op["operationId"])
                  for methods in json.loads(api.http.get("/openapi.json").body)["paths"].values()
                  for op in methods.values()]
    encodings: dict[str, str | None] = {}
    with serving(_recording_encodings(wsgi_app(app), encodings)) as base:
        page = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path}", f"{base}/docs"],
                              capture_output=True, text=True, timeout=120)
    dom = page.stdout
    assert 'class="swagger-ui' in dom, page.stderr[-2000:]
    missing = [f"{tag}/{operation}" for tag, operation in operations
               if f'id="operations-{tag}-{operation}"' not in dom]
    assert not missing, f"{len(missing)} of {len(operations)} operations are not on the page: {missing[:10]}"
    # the browser asked for gzip and read the compressed description and script
    assert encodings["/openapi.json"] == encodings["/docs/swagger-ui-bundle.js"] == "gzip", encodings


def _recording_encodings(application, encodings: dict[str, str | None]):
    """`application`, noting the Content-Encoding of each path's answer in `encodings`."""

    def recording(environ, start_response):
        def start(status, headers, *rest):
            encodings[environ["PATH_INFO"]] = dict(headers).get("Content-Encoding")
            return start_response(status, headers, *rest)

        return application(environ, start)

    return recording


def test_the_docs_page_and_its_files_need_no_token(api):
    page = api.http.get("/docs")
    assert (page.status_code, page.headers["Content-Type"]) == (200, "text/html; charset=utf-8")
    assert 'src="docs/swagger-ui-bundle.js"' in page.body.decode()
    script = api.http.get("/docs/swagger-ui-bundle.js")
    assert (script.status_code, script.headers["Content-Type"]) == (200, "text/javascript; charset=utf-8")
    assert b"SwaggerUIBundle" in script.body


def test_the_docs_page_serves_no_other_file(api):
    answer = api.http.get("/docs/..%2F..%2Fetc%2Fpasswd")
    assert answer.status_code in (403, 404)  # no route: chalice's test client answers 403, make run our 404
    assert b"root:" not in answer.body

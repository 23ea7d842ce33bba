"""`GET /docs` in a real headless browser (Debian's chromium, which `make test` installs): the page
renders the operations of its first domain and offers every other domain, with every other host unreachable,
so it needs no CDN; and it is ready within 2 s of what the browser takes for an empty page.

How fast: chromium loads `about:blank` and `/docs` in turns, each a fresh headless process that dumps the
page once it is idle (every fetch answered, scripts and rendering done: the page is ready to use); the
best of each is compared. On a quiet machine `about:blank` takes about 0.7 s and the goal is `/docs` within
2 s more, so at most (0.7 + 2) / 0.7 = 3.9 times it; a ratio, so a loaded machine slows both alike. Before
the page read one domain at a time it took 17-19 s (12.4 s against 0.9 s, 13.5 times, on a quiet machine).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time

from tests.support.wsgi import serving, wsgi_app

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--virtual-time-budget=30000",
    "--dump-dom",
]
ROUNDS = 2
READY_RATIO = 3.9


def test_the_docs_page_is_ready_soon_and_lists_its_domain_offline(app, api, tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "make test installs Debian's chromium (make browser); run it once"
    whole = json.loads(api.http.get("/openapi.json").body)
    tags = [tag["name"] for tag in whole["tags"]]
    first = [
        op["operationId"] for methods in whole["paths"].values() for op in methods.values() if op["tags"] == [tags[0]]
    ]
    encodings: dict[str, str | None] = {}
    timings: dict[str, list[float]] = {"about:blank": [], "/docs": []}
    with serving(_recording_encodings(wsgi_app(app), encodings)) as base:
        for round_ in range(ROUNDS):
            for page_name, url in (("about:blank", "about:blank"), ("/docs", f"{base}/docs")):
                started = time.perf_counter()
                page = subprocess.run(
                    [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / str(round_)}", url],
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                timings[page_name].append(time.perf_counter() - started)
    dom = page.stdout
    assert 'class="swagger-ui' in dom, page.stderr[-2000:]
    missing = [operation for operation in first if f'id="operations-{tags[0]}-{operation}"' not in dom]
    assert not missing, f"{len(missing)} of {len(first)} operations of {tags[0]} are not on the page: {missing[:10]}"
    offered = [f'<option value="docs/openapi/{tag}">{tag}</option>' for tag in tags]
    assert all(option in dom for option in offered), "the top bar does not offer every domain"
    # the browser asked for gzip and read the compressed description and script
    assert encodings[f"/docs/openapi/{tags[0]}"] == encodings["/docs/swagger-ui-bundle.js"] == "gzip", encodings
    blank, docs = min(timings["about:blank"]), min(timings["/docs"])
    print(f"about:blank {blank:.2f} s, /docs {docs:.2f} s: x{docs / blank:.2f}")
    assert docs <= READY_RATIO * blank, f"/docs took {docs:.2f} s, about:blank {blank:.2f} s: x{docs / blank:.2f}"


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

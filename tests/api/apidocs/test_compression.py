"""`/openapi.json` (0.9 MB of JSON) and the docs page's files are built once per process, sent gzip-compressed
to a request whose Accept-Encoding takes gzip, and carry an ETag that a revalidation gets a bodiless 304 for
(the docs page showed its spinner for seconds while it fetched the description whole)."""

from __future__ import annotations

import gzip
import json

import pytest

DOCS_FILES = [
    "/openapi.json",
    "/docs",
    "/docs/openapi/accounts",
    "/docs/swagger-ui.css",
    "/docs/swagger-ui-bundle.js",
    "/docs/swagger-ui-standalone-preset.js",
]


def test_the_description_comes_gzip_compressed_to_a_tenth_of_its_size_when_asked(api):
    plain = api.http.get("/openapi.json")
    compressed = api.http.get("/openapi.json", headers={"Accept-Encoding": "gzip, deflate, br"})

    assert "Content-Encoding" not in plain.headers
    assert (compressed.status_code, compressed.headers["Content-Encoding"]) == (200, "gzip")
    assert compressed.headers["Content-Type"] == plain.headers["Content-Type"] == "application/json"
    assert gzip.decompress(compressed.body) == plain.body
    assert json.loads(plain.body)["openapi"] == "3.1.0"
    assert len(plain.body) > 500_000 and len(compressed.body) < len(plain.body) / 10
    assert compressed.headers["Vary"] == plain.headers["Vary"] == "Accept-Encoding"


@pytest.mark.parametrize(
    ("accept_encoding", "compressed"),
    [
        ("gzip", True),
        ("GZIP;q=0.5", True),
        ("br, *", True),
        ("deflate, gzip;q=1.0", True),
        ("gzip;q=0", False),
        ("identity", False),
        ("br", False),
        ("*, gzip;q=0", False),
        ("", False),
    ],
)
def test_only_an_accept_encoding_that_takes_gzip_gets_it(api, accept_encoding, compressed):
    answer = api.http.get("/docs/swagger-ui.css", headers={"Accept-Encoding": accept_encoding})

    assert answer.status_code == 200
    assert (answer.headers.get("Content-Encoding") == "gzip") is compressed
    body = gzip.decompress(answer.body) if compressed else answer.body
    assert b".swagger-ui" in body


@pytest.mark.parametrize("path", DOCS_FILES)
def test_a_revalidation_with_the_etag_is_a_bodiless_304_and_another_etag_the_file(api, path):
    first = api.http.get(path)
    etag = first.headers["ETag"]
    assert etag.startswith('W/"') and first.headers["Cache-Control"] == "public, no-cache"

    for named in (etag, etag.removeprefix("W/"), f'"other", {etag}', "*"):
        again = api.http.get(path, headers={"If-None-Match": named, "Accept-Encoding": "gzip"})
        assert (again.status_code, again.body, again.headers["ETag"]) == (304, b"", etag), named
    other = api.http.get(path, headers={"If-None-Match": 'W/"another-version"'})
    assert (other.status_code, other.body, other.headers["ETag"]) == (200, first.body, etag)
    compressed = api.http.get(path, headers={"Accept-Encoding": "gzip"})
    assert compressed.headers["ETag"] == etag  # weak: one tag for the plain and the compressed body


def test_the_description_is_built_once_per_process(api):
    from chalicelib.apidocs import routes

    answers = [api.http.get("/openapi.json", headers={"Accept-Encoding": encoding}) for encoding in ("", "gzip", "")]

    assert answers[0].body == answers[2].body
    assert routes._description.cache_info().misses == 1

"""The ad-hoc render takes the platform's multipart/form-data body (the template as the file part `file` or
the text part `template`) as well as our JSON one; a bad body is a 400 that renders nothing."""

from __future__ import annotations

from urllib.parse import urlencode

from tests.api.documents.support import documents, documents_tenant, listed
from tests.api.quotes.support import auto, create, new_account
from tests.support.api import assert_error, call

BOUNDARY = "pas-render-boundary"


def form(*parts: tuple[str, bytes, str | None]) -> bytes:
    """A multipart body of (name, content, filename) parts; a part without a filename is a text field."""
    body = b""
    for name, content, filename in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        body += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + content + b"\r\n"
    return body + f"--{BOUNDARY}--\r\n".encode()


def render_form(api, token, tenant, body: bytes, **query):
    return call(
        api,
        "POST",
        documents(tenant, f"/render?{urlencode(query)}"),
        token,
        raw=body,
        headers={"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"},
    )


def test_a_multipart_template_file_or_field_renders_like_the_json_one(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    reference = {"referenceType": "quote", "referenceLocator": quote["locator"]}

    from_file = render_form(
        api,
        admin_token,
        tenant,
        form(("file", "<i>{{ account.data.firstName }} ✓</i>".encode(), "letter.liquid")),
        **reference,
    )
    assert from_file.status_code == 200, from_file.body
    assert (from_file.body, from_file.headers["Content-Type"]) == ("<i>Ada ✓</i>".encode(), "text/html; charset=utf-8")
    from_field = render_form(
        api,
        admin_token,
        tenant,
        form(("template", b"#set($n = $account.data.lastName)Dear $n", None)),
        **reference,
        templateFormat="velocity",
    )
    assert from_field.status_code == 200, from_field.body
    assert from_field.body == b"Dear Lovelace"

    assert listed(api, admin_token, tenant, "quote", quote["locator"]) == []
    assert jobs.sent == []


def test_a_bad_multipart_body_is_a_400(api, admin_token):
    tenant = documents_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    reference = {"referenceType": "quote", "referenceLocator": quote["locator"]}

    both = form(("template", b"a", None), ("file", b"b", "b.liquid"))
    body = assert_error(render_form(api, admin_token, tenant, both, **reference), 400, "request.invalid")
    assert "send the template once" in body["fieldErrors"][0]["message"]
    assert_error(
        render_form(api, admin_token, tenant, form(("templet", b"a", None)), **reference), 400, "request.invalid"
    )
    assert_error(
        render_form(api, admin_token, tenant, form(("file", b"\xff\xfe", "t.liquid")), **reference),
        400,
        "request.malformed_multipart",
    )
    assert_error(
        render_form(api, admin_token, tenant, b"--other\r\n\r\nx\r\n--other--", **reference),
        400,
        "request.malformed_multipart",
    )
    assert_error(render_form(api, admin_token, tenant, form(), **reference), 400, "document.template_missing")

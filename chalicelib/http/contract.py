"""What a route accepts and answers, read from its view's signature.

A view declares its request body as a parameter named `body` and its query as a parameter named `query`,
and its answer as its return annotation:

    @bp.route("/policy/{tenantLocator}/accounts", methods=["POST"])
    @endpoint("accounts.write", errors=[codes.ACCOUNT_TYPE_NOT_CONFIGURED])
    def create_account(tenantLocator: str, body: schemas.AccountCreateRequest) -> schemas.AccountResponse:
        ...

@endpoint parses and validates both before the view runs (400 with the fields named when they do not
fit) and hands the view its models; the generated OpenAPI reads the same contract. The annotations name
schema modules that route modules load lazily (cold start), so a contract is resolved on first use.

Bodies other than JSON:

- `body: Upload` is a file: the raw body, or the `file` part of a `multipart/form-data` body (its bytes,
  not copied into an `Upload`). A subclass that names a `purpose` also takes, instead of the body, the file
  of an upload of that purpose (`POST /uploads`) named by `?uploadLocator=` (http/uploads.py).
- `body: Annotated[Model, FORM]` may also come form-encoded (OAuth2 token requests).
- `body: Annotated[str, TEXT]` may also come as `text/plain`, taken as the string it is.
- `body: Annotated[Model, MULTIPART]` may also come as `multipart/form-data`, each part a field (text).
- `body: Model | None` may be left out (an empty body is None).
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import parse_qs

from pydantic import BaseModel, TypeAdapter, ValidationError

from chalicelib.core import codes
from chalicelib.core.errors import FieldError
from chalicelib.http import request

Encoding = Literal["json", "form", "text", "file", "multipart"]


class Upload(bytes):
    """An uploaded file: the raw request body, or the `part` part of a multipart/form-data body (a
    subclass names another part: documents take theirs as `document`)."""

    part: ClassVar[str] = "file"
    purpose: ClassVar[str | None] = None
    """The `POST /uploads` purpose whose upload the route takes by `?uploadLocator=` in place of the body;
    None: the body only."""


UPLOAD_LOCATOR = "uploadLocator"
"""The query parameter that names an upload in place of a file body."""
UPLOAD_LOCATOR_PATTERN = r"^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$"
"""An upload's locator: a ULID, in either case."""


@dataclass(frozen=True)
class _Encoding:
    name: Encoding


FORM = _Encoding("form")
"""The body may be form-encoded (`application/x-www-form-urlencoded`) as well as JSON."""
TEXT = _Encoding("text")
"""The body may be `text/plain`, taken as the string it is, as well as a JSON string."""
MULTIPART = _Encoding("multipart")
"""The body may be `multipart/form-data` (its parts the model's fields, as text) as well as JSON."""


@dataclass(frozen=True)
class Body:
    annotation: Any
    """The type the body validates to (a pydantic model, or any type pydantic validates)."""
    required: bool
    encoding: Encoding


@dataclass(frozen=True)
class Contract:
    body: Body | None
    query: type[BaseModel] | None
    response: Any
    """The return annotation: a model, a list or dict of them, `str`, `None` (no body) or `Binary`."""

    @property
    def upload_purpose(self) -> str | None:
        """The upload purpose the route takes by `?uploadLocator=` (None: it takes none)."""
        if self.body is None or self.body.encoding != "file":
            return None
        purpose: str | None = self.body.annotation.purpose
        return purpose

    @property
    def referenced_upload_purpose(self) -> str | None:
        """The upload purpose the route takes by `?uploadLocator=`: in place of its file body, or named by its
        query model (`upload_purpose`, beside a JSON body the route then leaves out); None: it takes none."""
        if self.upload_purpose is not None:
            return self.upload_purpose
        if self.query is None or UPLOAD_LOCATOR not in self.query.model_fields:
            return None
        purpose: str | None = getattr(self.query, "upload_purpose", None)
        return purpose


@functools.cache
def contract_of(view: Callable[..., Any]) -> Contract:
    hints = typing.get_type_hints(view, include_extras=True)
    parameters = inspect.signature(view).parameters
    body = _body(hints["body"], parameters["body"]) if "body" in parameters else None
    query = hints["query"] if "query" in parameters else None
    if query is not None and not (isinstance(query, type) and issubclass(query, BaseModel)):
        raise TypeError(f"{view.__name__}: the query must be a pydantic model, not {query!r}")
    return Contract(body=body, query=query, response=hints.get("return"))


def _body(annotation: Any, parameter: inspect.Parameter) -> Body:
    encoding: Encoding = "json"
    if typing.get_origin(annotation) is Annotated:
        base, *extras = typing.get_args(annotation)
        encoding = next((extra.name for extra in extras if isinstance(extra, _Encoding)), "json")
        constraints = [extra for extra in extras if not isinstance(extra, _Encoding)]
        annotation = Annotated[(base, *constraints)] if constraints else base
    if isinstance(annotation, type) and issubclass(annotation, Upload):
        return Body(annotation, True, "file")
    members = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    if type(None) in members:
        inner = [member for member in members if member is not type(None)]
        return Body(inner[0] if len(inner) == 1 else functools.reduce(operator.or_, inner), False, encoding)
    return Body(annotation, parameter.default is inspect.Parameter.empty, encoding)


def upload_reference(contract: Contract) -> str | None:
    """The upload the request names in place of its file body (`?uploadLocator=`), on a route that takes one;
    400 when it also sends a body, or names no upload's locator."""
    if contract.upload_purpose is None:
        return None
    locator: str | None = (request.current_request().query_params or {}).get(UPLOAD_LOCATOR)
    if locator is None:
        return None
    if request.raw_body():
        raise codes.REQUEST_INVALID(
            "Send the file as the body, or name its upload with ?uploadLocator= and an empty body, not both",
            field_errors=[FieldError(UPLOAD_LOCATOR, "must come with an empty body")],
        )
    if not re.match(UPLOAD_LOCATOR_PATTERN, locator):
        raise codes.REQUEST_INVALID(
            "The query is invalid",
            field_errors=[FieldError(UPLOAD_LOCATOR, "must be the uploadLocator POST /uploads answered")],
        )
    return locator.upper()


def arguments(contract: Contract) -> dict[str, Any]:
    """The view's `body` and `query`, parsed from the current request (400 when they do not fit); a body named
    by `?uploadLocator=` is left to the caller (`upload_reference`)."""
    parsed: dict[str, Any] = {}
    if contract.body is not None and upload_reference(contract) is None:
        parsed["body"] = _parse_body(contract.body)
    if contract.query is not None:
        parsed["query"] = request.query_as(contract.query)
    return parsed


def _parse_body(body: Body) -> Any:
    if body.encoding == "file":  # the bytes as they came: `Upload(...)` would copy a body of up to the upload limit
        return request.uploaded_file(body.annotation.part)
    if not body.required and not request.raw_body().strip():
        return None
    if body.encoding == "form" and request.content_type() == "application/x-www-form-urlencoded":
        value: Any = _form()
    elif body.encoding == "multipart" and request.content_type() == "multipart/form-data":
        value = request.multipart_fields()
    elif body.encoding == "text" and request.content_type() == "text/plain":
        value = request.raw_body().decode("utf-8", "replace")
    else:
        value = request.json_value()
    return validated(body.annotation, value)


def _form() -> dict[str, str]:
    try:
        text = request.raw_body().decode("utf-8")
    except UnicodeDecodeError:
        raise codes.REQUEST_MALFORMED_FORM("The form body is not UTF-8 text") from None
    return {name: values[-1] for name, values in parse_qs(text, keep_blank_values=True).items()}


def validated(annotation: Any, value: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return request.validate(annotation, value)
    try:
        return _adapter(annotation).validate_python(value)
    except ValidationError as error:
        raise codes.REQUEST_INVALID("The request body is invalid", field_errors=request.field_errors(error)) from None


@functools.cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)

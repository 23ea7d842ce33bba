"""Our description (generated from the route table and the models, as GET /openapi.json serves it) against the
platform's definition (conformance.py): for every operation both have, every answer (`application/json` or the
platform's `*/*`) carries what the platform requires with its types and enum values, and null nowhere the
platform does not allow it; every body and query parameter its clients send fits ours (DECISIONS.md, "Scope").

A difference our API decided on stays in ALLOWED with its reason; every entry must still match a difference."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from app import app
from chalicelib.apidocs import openapi
from tests.architecture import conformance
from tests.support.platform_client import PLATFORM_DEFINITION

ALLOWED = (
    # Spec part 1 answers the basic user list in the list shape BasicUserListResponse (listCompleted and
    # BasicUserResponse items, as users/list and roles/list answer); the platform's definition gives this
    # operation the item's schema.
    r"GET /auth/users/basic/list answer\.(locator|userName): required by the platform, missing in ours",
    # Spec part 2 answers the deprecated snapshot list as PolicySnapshotListResponse, as the account's snapshot
    # list answers; the platform's definition answers a bare array.
    r"GET /policy/\{tenantLocator\}/policies/snapshot/list answer: the platform's type is array, ours is object",
    # DECISIONS.md ("Policy transactions and charges") names the change instructions we take: add, modify,
    # delete, params, producers and migrate. The platform's transactionData instruction is not one of them.
    r"(PATCH|PUT) /policy/\{tenantLocator\}/\S+ body(\[\])?: the platform takes action: transactionData, we refuse it",
    # The definition marks no field nullable anywhere, yet requires fields that have no value: a flag's
    # clearedBy and clearedTime until it is cleared, its taskCreationResponse (flags create no tasks), a hold's
    # scope of the other kind (a quote's hold has no policyHoldScope, a policy's no quoteHoldScope). They are
    # answered as null, so the field is there (priceable/schemas.py, WithNulls).
    r"\S+ \S+ answer\S*\.(clearedBy|clearedTime|taskCreationResponse|quoteHoldScope|policyHoldScope): "
    r"we answer null, the platform does not allow it",
    # Likewise a documents job's transactionLocator and segmentLocator (a quote's job has neither) and its
    # completedAt (a running job): left out when they have no value, as every answer leaves out what is None.
    r"GET /document/\{tenantLocator\}/documents/(quote|segment|transaction)/\{locator\}/jobs/\{jobLocator\} "
    r"answer\.(transactionLocator|segmentLocator|completedAt): required by the platform, optional in ours",
    # Not in the spec: the payments list pages one account's payments, or the tenant's (an index of each); a list
    # by target container would need an index of its own.
    r"GET /billing/\{tenantLocator\}/payments/list query\.targetContainerLocator: the platform takes it, we do not",
    # The compliance GETs take their required `request` object in the query, form-exploded (OpenAPI's default
    # style for a query object): its fields are the query parameters, required where the object requires them
    # (compliance/schemas.py; `references` is a JSON object, as a map of lists has no exploded form).
    r"GET /compliance/\{tenantLocator\}/(jobs|preview|references) query\.request: the platform takes it, we do not",
    r"GET /compliance/\{tenantLocator\}/(jobs|preview|references) query\.(jobLocators|references): we require it, "
    r"the platform's clients may leave it out",
)
"""The differences our API decided on, or that the definition leaves no way around: each a pattern that matches
the whole of a difference's text."""


@pytest.fixture(scope="module")
def found() -> list[str]:
    ours: dict[str, Any] = openapi.document(app.routes)
    theirs = json.loads(PLATFORM_DEFINITION.read_text())
    return list(conformance.report(conformance.differences(ours, theirs)))


def test_every_answer_and_body_fits_the_platforms_definition_but_where_we_decided_otherwise(found):
    unexplained = [
        difference for difference in found if not any(re.fullmatch(allowed, difference) for allowed in ALLOWED)
    ]
    assert not unexplained, f"{len(unexplained)} differences from the platform's definition:\n" + "\n".join(unexplained)


def test_every_allowed_difference_is_still_one(found):
    stale = [allowed for allowed in ALLOWED if not any(re.fullmatch(allowed, difference) for difference in found)]
    assert not stale, "no longer a difference: drop from ALLOWED:\n" + "\n".join(stale)

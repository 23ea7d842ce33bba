"""The contacts of a record as one pure module: add, change roles, remove, merge, check."""

from __future__ import annotations

import pytest

from chalicelib.accounts.models import ContactRole
from chalicelib.core import contacts
from chalicelib.core.errors import AlreadyExists, InvalidRequest, NotFound

ADA = "01J0000000000000000000000A"
BOB = "01J0000000000000000000000B"


def contact(locator: str, *roles: str) -> ContactRole:
    return ContactRole(contactLocator=locator, roles=list(roles))


def test_adding_a_contact_that_is_there_already_is_a_conflict_named_for_the_record():
    current = [contact(ADA, "insured")]
    assert contacts.added(current, contact(BOB, "payer"), code="policy", noun="policy") == [
        contact(ADA, "insured"),
        contact(BOB, "payer"),
    ]
    with pytest.raises(AlreadyExists) as refused:
        contacts.added(current, contact(ADA, "payer"), code="policy", noun="policy")
    assert refused.value.code == "policy.contact_exists"
    assert refused.value.message == f"Contact {ADA} is on the policy already"


def test_roles_are_removed_then_added_once_in_order_and_the_list_is_a_new_one():
    current = [contact(ADA, "insured", "payer"), contact(BOB, "payer")]
    changed = contacts.with_roles(current, ADA, add_roles=["agent", "agent", "payer"], remove_roles=["payer"])
    assert changed == [contact(ADA, "insured", "agent", "payer"), contact(BOB, "payer")]
    assert current[0].roles == ["insured", "payer"]


def test_changing_or_removing_a_contact_the_record_lacks_is_not_found():
    with pytest.raises(NotFound) as missing:
        contacts.with_roles([contact(ADA)], BOB, add_roles=[], remove_roles=[])
    assert missing.value.code == "contact.not_found"
    with pytest.raises(NotFound):
        contacts.removed([contact(ADA)], BOB)
    assert contacts.removed([contact(ADA), contact(BOB)], ADA) == [contact(BOB)]


def test_merging_replaces_named_contacts_adds_new_ones_then_drops_the_removed():
    current = [contact(ADA, "insured"), contact(BOB, "payer")]
    merged = contacts.merged(current, [contact(BOB, "agent"), contact("01J0000000000000000000000C")], [ADA])
    assert merged == [contact(BOB, "agent"), contact("01J0000000000000000000000C")]


def test_problems_name_each_repeated_contact_and_each_unconfigured_role_by_position():
    listed = [contact(ADA, "insured", "pilot"), contact(ADA, "insured")]
    problems = contacts.problems(listed, ["insured", "payer"])
    assert [(p.field, p.message) for p in problems] == [
        ("contacts.0.roles", "pilot not in the configured contactRoles: insured, payer"),
        ("contacts.1.contactLocator", "is listed more than once"),
    ]
    assert contacts.problems(listed) == [problems[1]]


def test_without_configured_roles_any_role_goes():
    contacts.check_roles([], ["anything"], "roles", code="account")
    with pytest.raises(InvalidRequest) as refused:
        contacts.check_roles(["insured"], ["insured", "pilot"], "addRoles", code="account")
    assert refused.value.code == "account.invalid_reference"
    assert [(e.field, e.message) for e in refused.value.field_errors] == [
        ("addRoles", "pilot not in the configured contactRoles: insured")
    ]


def test_a_missing_contact_is_named_and_unknown_roles_are_listed_together():
    with pytest.raises(NotFound) as missing:
        contacts.removed([contact(ADA)], BOB)
    assert missing.value.message == f"contact {BOB} not found"
    with pytest.raises(InvalidRequest) as refused:
        contacts.check_roles(["insured"], ["pilot", "insured", "cook"], "roles", code="policy")
    assert (refused.value.message, [e.message for e in refused.value.field_errors]) == (
        "Unknown contact role",
        ["pilot, cook not in the configured contactRoles: insured"],
    )

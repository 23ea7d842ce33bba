"""The replacement of personal data (compliance/models.py): texts that quote a replaced value (validation
messages) are rewritten too, and a replacement keeps to the field's configured pattern where it can."""

from __future__ import annotations

import re

from chalicelib.compliance.models import PLACEHOLDER, names_contact, scrubbed, without_contact

PERSONAL = {
    "name": {"type": "string"},
    "postcode": {"type": "string", "regex": "[0-9]{5}"},
    "email": {"type": "string", "regex": r"[^@ ]+@[^@ ]+\.[a-z]+"},
    "code": {"type": "string", "regex": "[A-Z]{2}", "maxLength": 2},
    "plate": {"type": "string", "regex": "[a-z]{2}-[0-9]{3}"},
    "birthDate": {"type": "date", "restrictedData": True},
}


def test_validation_messages_quoting_a_personal_value_are_rewritten_and_other_texts_kept():
    record = {
        "data": {"name": "Ada Lovelace", "birthDate": "1815-12-10", "channel": "web"},
        "validationResult": {
            "success": False,
            "validationItems": [
                {
                    "elementType": "PersonAccount",
                    "errors": ["data.name: 'Ada Lovelace' is on a list (1815-12-10)", "data.channel: web is closed"],
                }
            ],
        },
        "note": "Ada Lovelace",
    }
    replaced = scrubbed(record, PERSONAL)
    assert replaced["data"] == {"name": PLACEHOLDER, "channel": "web"}
    assert replaced["validationResult"]["validationItems"][0]["errors"] == [
        f"data.name: '{PLACEHOLDER}' is on a list ({PLACEHOLDER})",
        "data.channel: web is closed",
    ]
    assert replaced["note"] == "Ada Lovelace"  # neither data nor a message: kept
    assert scrubbed(replaced, PERSONAL) == replaced  # idempotent


def test_a_replacement_matches_the_fields_pattern_when_one_of_the_fillers_does():
    replaced = scrubbed(
        {"data": {"postcode": "12345", "email": "ada@example.com", "code": "GB", "plate": "ab-123"}}, PERSONAL
    )["data"]
    assert (replaced["postcode"], replaced["email"], replaced["code"]) == (
        "00000",
        "anonymized@anonymized.invalid",
        "AN",
    )  # the placeholder cut to 2 fits
    for name in ("postcode", "email", "code"):
        assert re.fullmatch(PERSONAL[name]["regex"], replaced[name])
    assert replaced["plate"] == PLACEHOLDER  # no filler fits `[a-z]{2}-[0-9]{3}`: the placeholder stays


def test_a_contact_is_replaced_in_a_records_contacts_keeping_its_roles_and_others_once_only():
    record = {
        "locator": "A",
        "data": {"name": "Ada"},
        "contacts": [{"contactLocator": "C1", "roles": ["billing"]}, {"contactLocator": "C2", "roles": ["primary"]}],
    }
    replaced = without_contact(record, "C1", "X")
    assert replaced == {
        **record,
        "contacts": [{"contactLocator": "X", "roles": ["billing"]}, {"contactLocator": "C2", "roles": ["primary"]}],
    }
    assert (names_contact(record, "C1"), names_contact(replaced, "C1"), names_contact(replaced, "C2")) == (
        True,
        False,
        True,
    )
    assert without_contact(replaced, "C1", "Y") == replaced  # once replaced, it is in no list
    assert without_contact({"locator": "B"}, "C1", "X") == {"locator": "B"}
    assert not names_contact({"contacts": "C1"}, "C1")

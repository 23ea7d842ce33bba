"""Schedule items of a quote through the API: descriptions, add (at most 500), page by lastSeenLocator,
patch, delete, CSV upload; validation against the configured schedule; nothing stored when one item fails."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from tests.api.quotes.support import UNKNOWN, quote_path
from tests.api.schedules.support import csv_body, every_item, item, schedule_path
from tests.support.api import assert_error, call, event_types, events_of, ok


def test_the_quote_lists_the_schedule_of_its_vehicle(api, admin_token, tenant, quote):
    locator, vehicle = quote
    described = ok(call(api, "GET", quote_path(tenant, locator, "/schedules"), admin_token))
    assert described == {
        vehicle: {
            "staticElementLocator": vehicle,
            "complexData": True,
            "elementType": "Vehicle",
            "maxValidationErrors": 50,
            "scheduleItemType": "Equipment",
        }
    }


def test_added_items_page_by_last_seen_locator_in_the_order_they_came(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    added = call(api, "PUT", path, admin_token, [item(f"AB{n:04d}", value=f"{n}.505") for n in range(250)])
    assert ok(added) == {"success": True, "validationItems": []}
    assert event_types(api, admin_token, tenant, added) == ["schedule.items.add"]
    assert events_of(api, admin_token, tenant, added)[0]["data"]["itemCount"] == 250

    first = ok(call(api, "GET", path, admin_token))
    assert len(first["items"]) == 100
    assert first["lastSeenLocator"] == first["items"][-1]["locator"]
    assert first["items"][0]["data"] == {"serial": "AB0000", "kind": "laptop", "value": Decimal("0.51")}
    assert set(first["items"][0]) == {"locator", "staticElementLocator", "type", "data", "createdAt", "createdBy"}
    assert first["items"][0]["type"] == "Equipment" and first["items"][0]["staticElementLocator"] == vehicle

    items = every_item(api, admin_token, path)
    assert [entry["data"]["serial"] for entry in items] == [f"AB{n:04d}" for n in range(250)]
    last = ok(call(api, "GET", f"{path}?lastSeenLocator={items[-1]['locator']}", admin_token))
    assert last == {"lastSeenLocator": items[-1]["locator"], "items": []}


def test_one_invalid_item_fails_the_request_naming_its_row_and_stores_nothing(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    answer = ok(
        call(
            api,
            "PUT",
            path,
            admin_token,
            [item("AB0001"), item("bad", kind="tablet"), item("AB0003", value="many"), {"data": {"serial": "AB0004"}}],
        )
    )
    assert answer["success"] is False
    assert answer["validationItems"] == [
        {
            "locator": vehicle,
            "elementType": "Equipment",
            "errors": [
                "row 2: data.serial: must match the pattern [A-Z]{2}[0-9]{4}",
                "row 2: data.kind: must be one of: laptop, phone",
                "row 3: data.value: must be a number",
                "row 4: data.kind: is required",
                "row 4: data.value: is required",
            ],
        }
    ]
    assert every_item(api, admin_token, path) == []


def test_more_than_500_items_are_refused_and_nothing_is_stored(api, admin_token, tenant, quote, ddb_calls):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    ddb_calls.clear()
    assert_error(
        call(api, "PUT", path, admin_token, [item(f"AB{n:04d}") for n in range(501)]), 400, "schedule.too_many_items"
    )
    assert not {"BatchWriteItem", "TransactWriteItems", "PutItem"} & set(ddb_calls)
    assert every_item(api, admin_token, path) == []


def test_500_items_in_one_put_are_written_in_batches_then_shown_by_one_commit(
    api, admin_token, tenant, quote, ddb_calls
):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    ddb_calls.clear()
    assert ok(call(api, "PUT", path, admin_token, [item(f"CD{n:04d}") for n in range(500)]))["success"] is True
    assert ddb_calls.count("BatchWriteItem") == 20
    assert ddb_calls.count("TransactWriteItems") == 1
    assert Counter(ddb_calls) == {"BatchGetItem": 1, "GetItem": 3, "BatchWriteItem": 20, "TransactWriteItems": 1}
    assert len(every_item(api, admin_token, path)) == 500


def test_patch_sets_and_removes_data_and_validates_the_result(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    ok(call(api, "PUT", path, admin_token, [item("AB0001", insured=True), item("AB0002")]))
    first, second = every_item(api, admin_token, path)
    patched = call(
        api,
        "PATCH",
        path,
        admin_token,
        [
            {"locator": first["locator"], "setData": {"value": "2500"}, "removeData": {"insured": True}},
            {"locator": second["locator"], "setData": {"kind": "phone", "purchased": "2025-12-24"}, "removeData": {}},
        ],
    )
    assert ok(patched) == {"success": True, "validationItems": []}
    assert event_types(api, admin_token, tenant, patched) == ["schedule.items.update"]
    assert [entry["data"] for entry in every_item(api, admin_token, path)] == [
        {"serial": "AB0001", "kind": "laptop", "value": Decimal("2500.00")},
        {"serial": "AB0002", "kind": "phone", "value": Decimal("1000.00"), "purchased": "2025-12-24"},
    ]

    refused = ok(
        call(
            api,
            "PATCH",
            path,
            admin_token,
            [
                {"locator": first["locator"], "setData": {"value": "3000"}, "removeData": {}},
                {"locator": second["locator"], "setData": {}, "removeData": {"kind": "phone"}},
            ],
        )
    )
    assert refused["success"] is False
    assert refused["validationItems"][0]["errors"] == ["row 2: data.kind: is required"]
    assert every_item(api, admin_token, path)[0]["data"]["value"] == Decimal("2500.00")  # nothing stored

    assert_error(
        call(api, "PATCH", path, admin_token, [{"locator": UNKNOWN, "setData": {}, "removeData": {}}]),
        404,
        "scheduleItem.not_found",
    )
    # the failed patches released the schedule: another one goes through
    assert (
        ok(
            call(
                api,
                "PATCH",
                path,
                admin_token,
                [{"locator": first["locator"], "setData": {"value": "1"}, "removeData": {}}],
            )
        )["success"]
        is True
    )


def test_delete_removes_items_and_refuses_unknown_ones(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    ok(call(api, "PUT", path, admin_token, [item(f"AB{n:04d}") for n in range(3)]))
    first, second, third = every_item(api, admin_token, path)
    deleted = call(api, "DELETE", path, admin_token, [first["locator"], third["locator"]])
    assert deleted.status_code == 200, deleted.body
    assert event_types(api, admin_token, tenant, deleted) == ["schedule.items.delete"]
    assert [entry["locator"] for entry in every_item(api, admin_token, path)] == [second["locator"]]
    assert_error(
        call(api, "DELETE", path, admin_token, [second["locator"], first["locator"]]), 404, "scheduleItem.not_found"
    )
    assert [entry["locator"] for entry in every_item(api, admin_token, path)] == [second["locator"]]
    assert_error(
        call(api, "PATCH", path, admin_token, [{"locator": first["locator"], "setData": {}, "removeData": {}}]),
        404,
        "scheduleItem.not_found",
    )


def test_a_csv_upload_maps_its_header_to_flat_fields(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    body, content_type = csv_body(
        'serial,kind,value,insured,purchased\r\nAB0001,laptop,10.499,TRUE,2025-01-02\r\nAB0002,phone,"1,5",,\r\n'
    )
    answer = ok(
        api.http.post(path, body=body, headers={"Authorization": f"Bearer {admin_token}", "Content-Type": content_type})
    )
    assert answer == {
        "success": False,
        "validationItems": [
            {"locator": vehicle, "elementType": "Equipment", "errors": ["row 2: data.value: must be a number"]}
        ],
    }
    assert every_item(api, admin_token, path) == []

    body, content_type = csv_body(
        "serial,kind,value,insured,purchased\nAB0001,laptop,10.499,TRUE,2025-01-02\nAB0002,phone,15,,\n"
    )
    answer = ok(
        api.http.post(path, body=body, headers={"Authorization": f"Bearer {admin_token}", "Content-Type": content_type})
    )
    assert answer == {"success": True, "validationItems": []}
    assert [entry["data"] for entry in every_item(api, admin_token, path)] == [
        {"serial": "AB0001", "kind": "laptop", "value": Decimal("10.50"), "insured": True, "purchased": "2025-01-02"},
        {"serial": "AB0002", "kind": "phone", "value": Decimal("15.00")},
    ]


def test_a_csv_with_nested_or_list_columns_or_broken_rows_is_a_400(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    headers = {"Authorization": f"Bearer {admin_token}", "Content-Type": "text/csv"}
    nested = api.http.post(path, body=b"serial,kind,value,owner.name\nAB0001,laptop,1,Ada\n", headers=headers)
    body = assert_error(nested, 400, "schedule.nested_column")
    assert body["fieldErrors"] == [{"field": "owner.name", "message": "is a nested or list field"}]
    assert_error(api.http.post(path, body=b"serial,tags\nAB0001,a\n", headers=headers), 400, "schedule.nested_column")
    assert_error(
        api.http.post(path, body=b"serial,serial\nAB0001,AB0002\n", headers=headers), 400, "schedule.file_invalid"
    )
    assert_error(api.http.post(path, body=b"\xff\xfe", headers=headers), 400, "schedule.file_invalid")
    short = ok(api.http.post(path, body=b"serial,kind,value\nAB0001,laptop\n", headers=headers))
    assert short["validationItems"][0]["errors"] == ["row 1: has 2 cells where the header has 3"]
    many = "serial,kind,value\n" + "".join(f"AB{n:04d},laptop,1\n" for n in range(501))
    assert_error(api.http.post(path, body=many.encode(), headers=headers), 400, "schedule.too_many_items")
    assert every_item(api, admin_token, path) == []


def test_only_a_draft_quote_changes_its_schedule_and_unknown_elements_have_none(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    ok(call(api, "PUT", path, admin_token, [item("AB0001")]))
    assert_error(call(api, "GET", schedule_path(tenant, locator, UNKNOWN), admin_token), 404, "schedule.not_found")
    assert_error(call(api, "GET", schedule_path(tenant, UNKNOWN, vehicle), admin_token), 404, "quote.not_found")
    ok(call(api, "PATCH", quote_path(tenant, locator, "/validate"), admin_token))
    assert_error(call(api, "PUT", path, admin_token, [item("AB0002")]), 409, "quote.not_draft")
    assert [entry["data"]["serial"] for entry in every_item(api, admin_token, path)] == ["AB0001"]

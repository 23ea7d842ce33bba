"""The synchronous CSV upload's 500-item limit applies while the file is read: a file of millions of rows
is refused after row 501, for the memory of those rows, not of the file (issue 26, point 20: 49.9 MB took
half a minute and 3.2 GB before the limit answered). A body takes at most 10 MB (API Gateway's limit; a larger
file comes as an upload, tests/api/uploads), so the files here are 9 MB."""

from __future__ import annotations

import time
import tracemalloc

from tests.api.schedules.support import csv_body, every_item, schedule_path
from tests.support.api import assert_error, ok

BODY_BYTES = 9 * 1024 * 1024


def _posted(api, token, path, body, content_type):
    """The answer, the seconds it took and the peak of the memory the request allocated (bytes)."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        answer = api.http.post(
            path, body=body, headers={"Authorization": f"Bearer {token}", "Content-Type": content_type}
        )
        took = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return answer, took, peak


def test_a_9_mb_csv_of_one_column_rows_is_refused_fast_for_the_memory_of_500_rows(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    body = b"serial\n" + b"AB0001\n" * (BODY_BYTES // 7)
    answer, took, peak = _posted(api, admin_token, path, body, "text/csv")
    body_of = assert_error(answer, 400, "schedule.too_many_items")
    assert "at most 500" in body_of["message"]
    assert took < 5, f"refused after {took:.1f} s"  # the whole file took 40 s here
    assert peak < 2 * 1024 * 1024, f"the request allocated {peak / 2**20:.1f} MB for a 9 MB body"
    assert every_item(api, admin_token, path) == []


def test_a_multipart_9_mb_csv_costs_at_most_one_copy_of_its_file(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    body, content_type = csv_body("serial\n" + "AB0001\n" * (BODY_BYTES // 7))
    answer, took, peak = _posted(api, admin_token, path, body, content_type)
    assert_error(answer, 400, "schedule.too_many_items")
    assert took < 5, f"refused after {took:.1f} s"
    assert peak < 1.2 * len(body), f"the request allocated {peak / 2**20:.1f} MB for a 9 MB body"


def test_blank_lines_do_not_count_and_a_file_of_exactly_500_rows_is_added_whole(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    rows = "".join(f"AB{n:04d},laptop,{n}.25\r\n\r\n" for n in range(500))
    answer, _, _ = _posted(api, admin_token, path, f"\ufeffserial,kind,value\r\n{rows}\n\n".encode(), "text/csv")
    assert ok(answer) == {"success": True, "validationItems": []}
    items = every_item(api, admin_token, path)
    assert [entry["data"]["serial"] for entry in items] == [f"AB{n:04d}" for n in range(500)]
    assert str(items[499]["data"]["value"]) == "499.25"


def test_the_501st_row_is_refused_and_a_file_not_utf8_before_it_is_invalid(api, admin_token, tenant, quote):
    locator, vehicle = quote
    path = schedule_path(tenant, locator, vehicle)
    rows = "".join(f"AB{n:04d},laptop,1\n" for n in range(501))
    answer, _, _ = _posted(api, admin_token, path, f"serial,kind,value\n{rows}".encode(), "text/csv")
    assert_error(answer, 400, "schedule.too_many_items")
    broken = f"serial,kind,value\n{rows[:40]}".encode() + b"\xff\xfe,laptop,1\n"
    answer, _, _ = _posted(api, admin_token, path, broken, "text/csv")
    assert_error(answer, 400, "schedule.file_invalid")
    assert every_item(api, admin_token, path) == []

"""Tenant Python source parsed in another process under kernel limits (sandbox/python_source.py): what it
finds, never running the modules, in the sandbox and, where a machine has none, in a plain child process;
the module that breaks the parser's memory, CPU or wall-clock limit is the one named; what a package
defines is remembered, unless its parse was cut short."""

from __future__ import annotations

import time

import pytest

from chalicelib.sandbox.python_source import MB, Parsed, ParseLimits, top_level_functions

MODULES = {
    "plugins/python/auto.py": b"raise SystemExit('never imported')\n"
    b"def rate_PersonalAuto(request):\n    return {'items': []}\n"
    b"def validate_PersonalAuto(request):\n    def rate_Nested(r): pass\n    return {'errors': []}\n",
    "plugins/python/common.py": b"def underwrite(request):\n    return {'flags': []}\n"
    b"class Helper:\n    def validate(self): pass\n"
    b"async def validate(request):\n    pass\n",
    "plugins/python/rating.py": b"def rate_Auto(request):\n    return 1\n\ndef broken(:\n    pass\n",
    "plugins/python/nul.py": b"x = 1\0\n",
    "plugins/python/heavy.py": ("x = [" + "a," * 100_000 + "]\n").encode(),
}
SLOW = {f"plugins/python/m{number:02d}.py": ("x = [" + "0," * 100_000 + "]\n").encode() for number in range(16)}
"""16 modules of 200 KB that take 0.2-0.3 s of CPU each to parse."""


@pytest.mark.parametrize("sandboxed", [True, False])
def test_top_level_functions_are_found_by_parsing_never_by_running(sandboxed):
    found = top_level_functions(MODULES, sandboxed=sandboxed)

    assert found == {
        "plugins/python/auto.py": Parsed(("rate_PersonalAuto", "validate_PersonalAuto")),
        "plugins/python/common.py": Parsed(("underwrite",)),
        "plugins/python/rating.py": Parsed(error="plugins/python/rating.py line 4: invalid syntax"),
        "plugins/python/nul.py": Parsed(
            error="plugins/python/nul.py line None: source code string cannot contain null bytes"
        ),
        "plugins/python/heavy.py": Parsed(
            error="plugins/python/heavy.py: cannot be parsed within the parser's limits (128 MB of memory)"
        ),
    }


@pytest.mark.parametrize(
    "limits, exceeded",
    [
        (ParseLimits(memory_bytes=1024 * MB, cpu_seconds=1), "1 s of CPU time"),
        (ParseLimits(memory_bytes=1024 * MB, wall_seconds=1), "1 s of wall-clock time"),
    ],
)
def test_the_module_being_parsed_when_a_limit_runs_out_is_named(limits, exceeded):
    found = top_level_functions(SLOW, limits)

    failed = [path for path, parsed in found.items() if parsed.error]
    assert len(failed) == 1 and found[failed[0]].error == (
        f"{failed[0]}: cannot be parsed within the parser's limits ({exceeded})"
    )
    assert all(found[path] == Parsed() for path in sorted(found) if path < failed[0])
    assert len(found) < len(SLOW)


def timed(modules: dict[str, bytes], limits: ParseLimits) -> tuple[dict[str, Parsed], float]:
    started = time.monotonic()
    return top_level_functions(modules, limits), time.monotonic() - started


def test_a_package_parsed_to_the_end_is_remembered_and_one_cut_short_is_not():
    four = dict(list(SLOW.items())[:4])
    first, parsing = timed(four, ParseLimits())
    again, remembering = timed(four, ParseLimits())
    cut = [timed(SLOW, ParseLimits(memory_bytes=1024 * MB, wall_seconds=1)) for _ in range(2)]

    assert again == first and all(parsed == Parsed() for parsed in first.values())
    assert remembering < parsing / 5
    assert [seconds >= 1 for _, seconds in cut] == [True, True]

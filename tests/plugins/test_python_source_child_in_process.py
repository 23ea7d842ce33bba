"""The hostile-source parser's logic (sandbox/python_source_child.py `parsed`, one module of the JSON it reads)
called in this process: a module's top-level functions found, and why a module that is not Python is refused.
The process (its user, its limits, a parse that runs out of CPU) runs only in the sandbox:
tests/plugins/test_python_source.py."""

from __future__ import annotations

from chalicelib.sandbox import python_source_child

MB = 1024 * 1024


def test_the_top_level_functions_of_a_module_are_found_in_their_order():
    source = b"import pas\n\ndef rate(r):\n    def inner(): ...\n    return {}\n\nclass C:\n    def m(self): ...\n\n"
    source += b"async def later(r): ...\n\ndef validate(r):\n    return {}\n"

    assert python_source_child.parsed("plugins/python/rating.py", source, 64 * MB) == {
        "path": "plugins/python/rating.py",
        "functions": ["rate", "validate"],
    }


def test_a_module_that_is_not_python_is_refused_with_why():
    cases = {
        b"def broken(:\n": "plugins/python/x.py line 1: invalid syntax",
        b"x = " + b"(" * 300 + b")" * 300: "plugins/python/x.py line 1: too many nested parentheses",
        b"x = "
        + b"-" * 100_000
        + b"1": "plugins/python/x.py: cannot be parsed within the parser's limits (64 MB of memory)",
        b"\xff\xfe": "plugins/python/x.py line 1: (unicode error) 'utf-8' codec can't decode byte 0xff in position 0: "
        "invalid start byte",
    }
    for source, error in cases.items():
        assert python_source_child.parsed("plugins/python/x.py", source, 64 * MB) == {
            "path": "plugins/python/x.py",
            "error": error,
        }
    # Python 3.11 reports a null byte as a SyntaxError without a line (the text says "line None")
    null = python_source_child.parsed("plugins/python/x.py", b"x = 1\0\n", 64 * MB)["error"]
    assert str(null).startswith("plugins/python/x.py") and str(null).endswith(
        "source code string cannot contain null bytes"
    )

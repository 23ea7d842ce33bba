"""moto's Lambda as AWS's: a function's version numbers are never used twice.

moto numbers a published version `len(versions) + 1`, so once a version is deleted (the tenant functions' prune
deletes the versions no alias points at) the next publish can take the number of a version that still exists, or
of one a deleted alias pointed at. AWS counts up for the function's life. `never_reused_versions()` makes moto
count the same way: the highest number the function ever published, plus one. The tests' moto (tests/conftest.py)
and `make run`'s (local/aws_server.py) both install it; it is never packaged into the Lambda.
"""

from __future__ import annotations

import copy
from typing import Any

_HIGHEST = "pas_highest_version"
"""Where the highest version number published is kept, in moto's record of the function (a plain dict)."""


def never_reused_versions() -> None:
    """Patches moto's LambdaStorage.publish_version (idempotent)."""
    from moto.awslambda.models import LambdaStorage

    if getattr(LambdaStorage.publish_version, "pas_never_reused", False):
        return

    def publish_version(self: Any, name_or_arn: str, description: str = "") -> Any:
        function = self.get_function_by_name_or_arn_forbid_qualifier(name_or_arn)
        name = function.function_name
        if name not in self._functions or not self._functions[name]["latest"]:
            return None
        record = self._functions[name]
        published = record["versions"]
        if published:
            if not function.code_or_config_updated:
                return published[-1]  # nothing changed: AWS answers the latest version too
            function.code_or_config_updated = False
        number = max([record.get(_HIGHEST, 0), *(int(found.version) for found in published)]) + 1
        record[_HIGHEST] = number
        fn = copy.copy(record["latest"])
        fn.set_version(number)
        if description:
            fn.description = description
        published.append(fn)
        self._arns[fn.function_arn] = fn
        return fn

    publish_version.pas_never_reused = True  # type: ignore[attr-defined]
    LambdaStorage.publish_version = publish_version

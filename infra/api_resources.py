"""Count the API Gateway path resources a REST API needs (the default quota is 300 per REST API).

API Gateway creates one resource per distinct path prefix: `/policy/{tenantLocator}/quotes/{locator}`
needs `/`, `/policy`, `/policy/{tenantLocator}`, `/policy/{tenantLocator}/quotes` and itself.

    .venv/bin/python infra/api_resources.py     # the spec's endpoints, the app, and its APIs once split

infra/split_api.py splits the app's routes into several REST APIs; the last lines count each of them.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_ENDPOINTS = ROOT.parent / "shared" / "spec" / "endpoints.tsv"
DEFAULT_QUOTA = 300


def resource_paths(paths: Iterable[str]) -> set[str]:
    """Every path resource (the root included) that routes on `paths` make API Gateway create."""
    resources = {"/"}
    for path in paths:
        segments = [s for s in path.split("/") if s]
        resources.update("/" + "/".join(segments[:i]) for i in range(1, len(segments) + 1))
    return resources


def by_top_segment(resources: set[str]) -> Counter[str]:
    return Counter("/" + r.split("/")[1] if r != "/" else "/" for r in resources)


def spec_paths(endpoints_tsv: Path = SPEC_ENDPOINTS) -> set[str]:
    """The paths of `METHOD /path<TAB>section` lines."""
    lines = endpoints_tsv.read_text().splitlines()
    return {line.split("\t", 1)[0].split(" ", 1)[1] for line in lines if line.strip()}


def app_paths() -> set[str]:
    sys.path.insert(0, str(ROOT))
    from app import app

    return set(app.routes)


def _report(title: str, paths: set[str]) -> None:
    resources = resource_paths(paths)
    verdict = "over" if len(resources) > DEFAULT_QUOTA else "within"
    print(f"{title}: {len(paths)} paths -> {len(resources)} resources ({verdict} the default {DEFAULT_QUOTA})")
    for segment, count in sorted(by_top_segment(resources).items(), key=lambda kv: -kv[1]):
        print(f"  {segment:<14}{count:>4}")


def _report_split(paths: set[str]) -> None:
    from split_api import GROUP_LIMIT, api_of

    apis: dict[str, set[str]] = {}
    for path in paths:
        apis.setdefault(api_of(path), set()).add(path)
    print(f"app.py split by infra/split_api.py (at most {GROUP_LIMIT} resources per API):")
    for api, api_paths in sorted(apis.items()):
        segments = ", ".join(sorted(set(by_top_segment(resource_paths(api_paths))) - {"/"}))
        print(f"  {api:<12}{len(api_paths):>4} paths {len(resource_paths(api_paths)):>4} resources  {segments}")


def main() -> None:
    if SPEC_ENDPOINTS.exists():
        _report(f"spec ({SPEC_ENDPOINTS.name})", spec_paths())
    paths = app_paths()
    _report("app.py now", paths)
    _report_split(paths)


if __name__ == "__main__":
    main()

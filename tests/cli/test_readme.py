"""The README's `pas` blocks (```sh) run where they stand, among the walkthrough's curl blocks, in one bash
against the local stack: `pas config deploy` replaces the tenant the curl blocks created, so the quote, policy
and change after it are made on the tenant pas deployed, and `pas events tail` finds the change's issue. The
fixtures run (`pas fixtures docs/examples/fixtures/first-year.json`) is left to tests/cli/test_fixtures.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import environment
from tests.e2e.support import BLOCK, README, ROOT

FIXTURES_RUN = "pas fixtures docs/examples/fixtures/first-year.json"


def test_the_pas_blocks_stand_in_for_the_curl_ones(local_stack, tmp_path, config_home):
    text = README.read_text()
    blocks = [
        (kind, body)
        for kind, body in BLOCK.findall(text[text.index("### First request") : text.index("### Other targets")])
        if kind in ("bash", "sh")
    ]
    pas_blocks = [body for kind, body in blocks if kind == "sh"]
    assert len(pas_blocks) >= 4 and any("pas config deploy" in body for body in pas_blocks)
    script = "\n".join(body for _, body in blocks).replace(FIXTURES_RUN, "true")
    script = script.replace("http://127.0.0.1:8000", local_stack.base_url).replace("/tmp/", f"{tmp_path}/")
    env = environment(config_home, PATH=f"{Path(sys.executable).parent}:{environment(config_home)['PATH']}")

    ran = subprocess.run(
        ["bash", "-c", "set -eu\n" + script + '\necho "tenant=$TENANT"'],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr
    assert "signed in to " + local_stack.base_url in ran.stdout
    tenant = ran.stdout.rsplit("tenant=", 1)[1].strip()
    assert json.loads((tmp_path / "tenant.json").read_text())["locator"] == tenant  # written by pas
    [issue] = [line for line in ran.stdout.splitlines() if "  policy.change.issue  " in line]
    assert '"policyLocator": ' in issue
    assert FIXTURES_RUN in text

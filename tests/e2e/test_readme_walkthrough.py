"""The README's first request and walkthrough, run as a reader runs them: its shell blocks, in order, in one
bash against the local stack (its URL for http://127.0.0.1:8000, a directory of the test's for /tmp/). Each
value the README's answer after a block shows (a `"name":value` pair; values abbreviated with `...` aside)
must be in what that block printed. The walkthrough goes on with billing on the tenant's test clock (the
term's invoice generated, paid in full and settled) and ends with a migration of docs/examples/migration-request.json
into the same tenant (replayed with its idempotency key, its accounts completed, mapped and their policy's history
read) and a failed account fixed by a PATCH."""

from __future__ import annotations

import re
import subprocess

from tests.e2e.support import BLOCK, README, ROOT

SHOWN_VALUE = re.compile(r'"\w+":(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)')
BLOCK_MARK = "@@ next block @@"


def walkthrough() -> list[tuple[str, str]]:
    """(shell block, the answer block after it or "") from "First request" to "Other targets"."""
    text = README.read_text()
    part = text[text.index("### First request") : text.index("### Other targets")]
    blocks: list[tuple[str, str]] = []
    for kind, body in BLOCK.findall(part):
        if kind == "bash":
            blocks.append((body, ""))
        elif kind == "json":
            blocks[-1] = (blocks[-1][0], body)
    return blocks


def shown_values(answer: str) -> list[str]:
    return [value for value in SHOWN_VALUE.findall(answer) if "..." not in value]


def test_the_walkthrough_runs_and_answers_what_the_readme_shows(tmp_path, local_stack):
    blocks = walkthrough()
    script = "\n".join(f"echo '{BLOCK_MARK}'\n{shell}" for shell, _ in blocks)
    script = script.replace("http://127.0.0.1:8000", local_stack.base_url).replace("/tmp/", f"{tmp_path}/")

    ran = subprocess.run(["bash", "-c", "set -eu\n" + script], cwd=ROOT, capture_output=True, text=True, timeout=300)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    printed = ran.stdout.split(BLOCK_MARK + "\n")[1:]
    assert len(printed) == len(blocks) >= 8
    for (shell, answer), output in zip(blocks, printed, strict=True):
        missing = [value for value in shown_values(answer) if value not in output]
        assert missing == [], (shell, output)
    checked = {value for _, answer in blocks for value in shown_values(answer)}
    assert {'"status":"created"', '"amount":54.00', '"amount":-6.00', '"transactionState":"issued"'} <= checked
    # billing to a paid invoice: the clock advanced, the issuance's invoice generated (66.00; the change's 49.50 is
    # generated in July), paid in full and settled
    assert {
        '"invoiceState":"open"',
        '"totalAmount":66.00',
        '"paymentState":"posted"',
        '"remainingAmount":0.00',
        '"invoiceState":"settled"',
        '"totalRemainingAmount":0.00',
        '"balance":0',
    } <= checked
    # the migration: both accounts completed, the policy's original ids mapped, the change's charges as migrated,
    # then a failed account fixed by a PATCH
    assert {
        '"migrationState":"finished"',
        '"completedAccounts":2',
        '"accountMigrationState":"completed"',
        '"originalAccountId":"LEGACY-C1"',
        '"originalId":"LEGACY-P1"',
        '"transactionCategory":"change"',
        '"amount":43.50',
        '"accountOriginalId":"LEGACY-C3"',
        '"completedAccounts":1',
    } <= checked

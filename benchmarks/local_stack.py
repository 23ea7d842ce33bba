"""The local stack (`make run`) under load and over time.

1. A write (a 3-put TransactWriteItems, journalled and fdatasync'ed) and two Queries through the emulated
   AWS of local/aws_server.py, on an empty table and on one of 100,000 items (median of N, in ms).
2. A bulk load as the bootstrap job does it: 8 threads sending 25-row BatchWriteItems, its rows a second and
   the fdatasyncs it cost; and the DynamoDB stream records moto then holds.
3. The snapshot cycle with nothing changed: bytes it reads.
4. 8 parallel clients creating 3,000 accounts through the real stack (local/run.py): errors, throughput.
5. The three real packages deployed (their bootstrap tables loaded by the worker), then the time from
   start to banner and from Ctrl-C to exit; then a kill -9 and a restart: acknowledged accounts present.

The machine may be shared: every figure is printed with the load average at the time.

    .venv/bin/python benchmarks/local_stack.py [--items 100000] [--accounts 3000] [--skip-packages]
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ROOT / "tests" / "fixtures" / "socotra-configs"
sys.path.insert(0, str(ROOT))
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _load() -> str:
    return f"[load {os.getloadavg()[0]:.1f}]"


class SyncCounter:
    """Counts the fdatasyncs of this process (the journal's), whatever version of local/ runs."""

    def __init__(self) -> None:
        self.count = 0
        self._original = os.fdatasync

    def __enter__(self) -> SyncCounter:
        def counted(fd: int) -> None:
            self.count += 1
            self._original(fd)

        os.fdatasync = counted
        return self

    def __exit__(self, *_: Any) -> None:
        os.fdatasync = self._original


def _median_ms(action: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def bulk_load(ddb: Any, table_name: str, rows: int, threads: int) -> None:
    """`rows` rows of ~300 bytes in 25-row BatchWriteItems from `threads` threads, as the bootstrap job loads."""
    batches = [
        [
            {
                "PutRequest": {
                    "Item": {"PK": {"S": f"BULK#{n % 40}"}, "SK": {"S": f"ROW#{n:08d}"}, "values": {"S": "v" * 300}}
                }
            }
            for n in range(start, min(start + 25, rows))
        ]
        for start in range(0, rows, 25)
    ]

    def send(client: int) -> None:
        for batch in batches[client::threads]:
            ddb.batch_write_item(RequestItems={table_name: batch})

    with SyncCounter() as syncs:
        started = time.perf_counter()
        _in_parallel(threads, send)
        seconds = time.perf_counter() - started
    print(
        f"bulk load {_load()}: {rows:,} rows in {len(batches):,} BatchWriteItems from {threads} threads: "
        f"{seconds:.1f} s, {rows / seconds:,.0f} rows/s, {syncs.count:,} fdatasyncs"
    )


def stream_records(table: Any) -> str:
    shard = getattr(table, "stream_shard", None)
    return "no stream" if shard is None else f"{len(shard.items):,} records"


def write_cost(items: int, runs: int, bulk_rows: int) -> None:
    import boto3
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    from local.aws_server import EmulatedAws
    from local.durable_state import DurableState
    from local.lean_moto import insert_item, lean_dynamodb
    from local.resources import table_definition

    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "PAS_STAGE": "dev"})
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as directory:
        state = DurableState(Path(directory))
        with lean_dynamodb(on_item_change=state.item_changed):
            port = _free_port()
            aws = EmulatedAws("127.0.0.1", port, state)
            aws.start()
            ddb = boto3.client("dynamodb", region_name=REGION, endpoint_url=f"http://127.0.0.1:{port}")
            definition = table_definition()
            name = definition["TableName"]
            ddb.create_table(**definition)
            counter = iter(range(10**7))

            def write() -> None:
                n = next(counter)
                ddb.transact_write_items(
                    TransactItems=[
                        {
                            "Put": {
                                "TableName": name,
                                "Item": {
                                    "PK": {"S": f"W#{n}"},
                                    "SK": {"S": str(part)},
                                    "GSI1PK": {"S": "W"},
                                    "GSI1SK": {"S": f"{n:08d}.{part}"},
                                },
                                "ConditionExpression": "attribute_not_exists(PK)",
                            }
                        }
                        for part in range(3)
                    ]
                )

            def query() -> None:
                ddb.query(
                    TableName=name, KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": {"S": "W#0"}}
                )
                ddb.query(
                    TableName=name,
                    IndexName="GSI1",
                    KeyConditionExpression="GSI1PK = :g",
                    ExpressionAttributeValues={":g": {"S": "W"}},
                    Limit=20,
                )

            empty = _median_ms(write, runs), _median_ms(query, runs)
            table = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(name)
            bulk_load(ddb, name, rows=bulk_rows, threads=8)
            with state.lock:
                for n in range(items):
                    insert_item(
                        table,
                        {
                            "PK": {"S": f"T#{n % 5000}"},
                            "SK": {"S": f"ROW#{n:08d}"},
                            "GSI1PK": {"S": f"G#{n % 3000}"},
                            "GSI1SK": {"S": f"{n:08d}"},
                            "data": {"S": "x" * 300},
                        },
                    )
            full = _median_ms(write, runs), _median_ms(query, runs)
            print(f"moto's DynamoDB stream after {bulk_rows + 6 * runs:,} writes: {stream_records(table)} held")
            aws.stop()
        print(
            f"write (3-put transaction, journalled) {_load()}: empty {empty[0]:.2f} ms, {items:,} items "
            f"{full[0]:.2f} ms: x{full[0] / empty[0]:.2f}"
        )
        print(
            f"2 queries (partition + GSI page):    empty {empty[1]:.2f} ms, {items:,} items "
            f"{full[1]:.2f} ms: x{full[1] / empty[1]:.2f}"
        )
        state.compact_if_due()  # the writes above may have made a merge due
        started = time.perf_counter()
        read = state.compact_if_due()
        print(
            f"snapshot cycle with nothing changed {_load()}: {read} bytes read, "
            f"{(time.perf_counter() - started) * 1e6:.0f} us"
        )
        state.close()


def package_zip(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory).as_posix())
    return buffer.getvalue()


def _in_parallel(clients: int, work: Any) -> list[Any]:
    results: list[Any] = [None] * clients
    threads = [threading.Thread(target=lambda n=n: results.__setitem__(n, work(n))) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _settled_item_count(aws_port: int, timeout: float = 900) -> int:
    """The table's item count once the job queue is empty and the count stops moving (bootstrap loads).

    DescribeTable, not a Scan: a Scan of the whole table every few seconds took most of the emulator's time
    and slowed the very load it waited for."""
    import boto3

    from chalicelib.settings import settings

    endpoint = f"http://127.0.0.1:{aws_port}"
    ddb = boto3.client("dynamodb", region_name=REGION, endpoint_url=endpoint)
    sqs = boto3.client("sqs", region_name=REGION, endpoint_url=endpoint)
    queue = sqs.get_queue_url(QueueName=settings().jobs_queue_name)["QueueUrl"]
    deadline, last = time.monotonic() + timeout, -1
    while time.monotonic() < deadline:
        attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
        waiting = sum(
            int(attributes[name]) for name in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
        )
        count = ddb.describe_table(TableName=settings().table_name)["Table"]["ItemCount"]
        if waiting == 0 and count == last:
            return count
        last = count
        time.sleep(1)
    raise RuntimeError("the bootstrap jobs did not settle")


def _rss_mb(stack: Any) -> str:
    for line in Path(f"/proc/{stack.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return f"{int(line.split()[1]) / 1024:.0f} MB"
    return "?"


def stack_runs(accounts: int, clients: int, with_packages: bool) -> None:
    from tests.api.accounts.support import person
    from tests.e2e.support import LocalStack
    from tests.support.configs import package, policy_model

    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "PAS_STAGE": "dev"})
    with tempfile.TemporaryDirectory() as directory:
        state, logs = Path(directory) / "state", Path(directory)
        stack = LocalStack(state, logs / "1.log")
        print(f"start, new state {_load()}: {stack.start_seconds:.1f} s to the banner")
        token = stack.sign_in()
        if with_packages:
            for name in ("mgt-commercial", "iag-motor-demo", "itemcare"):
                started = time.perf_counter()
                status, body = stack.request(
                    "POST", f"/config/createTenant?name={name}", token=token, package=package_zip(PACKAGES / name)
                )
                assert status == 200, body
                print(f"createTenant {name} {_load()}: {time.perf_counter() - started:.1f} s")
            started = time.perf_counter()
            print(
                f"bootstrap tables loaded by the worker: {_settled_item_count(stack.aws_port):,} items "
                f"after {time.perf_counter() - started:.0f} s more {_load()}; run.py holds {_rss_mb(stack)}"
            )
        status, body = stack.request(
            "POST", "/config/createTenant?name=accounts", token=token, package=package(policy_model())
        )
        assert status == 200, body
        tenant = body["locator"]
        per_client = accounts // clients
        started = time.perf_counter()
        answers = [
            answer
            for batch in _in_parallel(
                clients,
                lambda _: [
                    stack.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=person())
                    for _ in range(per_client)
                ],
            )
            for answer in batch
        ]
        seconds = time.perf_counter() - started
        errors = [answer for answer in answers if answer[0] != 200]
        print(
            f"{clients} clients x {per_client} accounts {_load()}: {len(errors)} errors in {len(answers)}, "
            f"{seconds:.1f} s, {len(answers) / seconds:.0f} accounts/s; first errors: {errors[:3]}"
        )
        acknowledged = [body["locator"] for status, body in answers if status == 200]
        print(f"run.py holds {_rss_mb(stack)}")

        stopping = time.perf_counter()
        assert stack.stop(timeout=300) == 0
        print(
            f"stop (Ctrl-C) {_load()}: {time.perf_counter() - stopping:.1f} s; state on disk: "
            + ", ".join(f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in sorted(state.iterdir()))
        )
        again = LocalStack(state, logs / "2.log")
        print(
            f"start with that state {_load()}: {again.start_seconds:.1f} s to the banner "
            f"({again.output().split('restored ')[1].split(' from')[0]})"
        )
        token = again.sign_in()
        status, body = again.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=person())
        assert status == 200, body
        acknowledged.append(body["locator"])
        again.kill()  # kill -9 of the process group
        third = LocalStack(state, logs / "3.log", ports=(again.port, again.aws_port))
        token = third.sign_in()
        missing = [
            locator
            for locator in acknowledged
            if third.request("GET", f"/policy/{tenant}/accounts/{locator}", token=token)[0] != 200
        ]
        print(
            f"after kill -9 and restart on the same ports {_load()} ({third.start_seconds:.1f} s): "
            f"{len(missing)} of {len(acknowledged)} acknowledged accounts missing"
        )
        stopping = time.perf_counter()
        assert third.stop(timeout=300) == 0
        print(f"stop (Ctrl-C) {_load()}: {time.perf_counter() - stopping:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--accounts", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--bulk-rows", type=int, default=20_000)
    parser.add_argument("--skip-stack", action="store_true", help="only the emulator measurements (1-3)")
    parser.add_argument("--skip-packages", action="store_true", help="no real packages in the stack runs")
    arguments = parser.parse_args()
    write_cost(arguments.items, arguments.runs, arguments.bulk_rows)
    if not arguments.skip_stack:
        stack_runs(arguments.accounts, arguments.clients, not arguments.skip_packages)


if __name__ == "__main__":
    main()

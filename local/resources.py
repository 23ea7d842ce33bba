"""Create the AWS resources of infra/template.json in an emulated AWS (moto), for tests and `make run`.

The table, bucket and queues are read from the same template that deploys them, so they cannot drift.
The deployed stack lets CloudFormation name them; here they take the names the settings default to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chalicelib.settings import settings

TEMPLATE = Path(__file__).resolve().parent.parent / "infra" / "template.json"


def resources() -> dict[str, Any]:
    return json.loads(TEMPLATE.read_text())["Resources"]


def table_definition() -> dict[str, Any]:
    """CreateTable arguments for the core table, from its CloudFormation properties."""
    props = resources()["CoreTable"]["Properties"]
    return {
        "TableName": settings().table_name,
        "BillingMode": props["BillingMode"],
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "GlobalSecondaryIndexes": props["GlobalSecondaryIndexes"],
        "StreamSpecification": {"StreamEnabled": True, **props["StreamSpecification"]},
    }


def create_all(session: Any) -> None:
    """Create table, bucket and queues with `session` (a boto3 Session pointed at moto); idempotent."""
    all_resources = resources()
    dynamodb = session.client("dynamodb")
    definition = table_definition()
    if definition["TableName"] not in dynamodb.list_tables()["TableNames"]:
        dynamodb.create_table(**definition)
        ttl = all_resources["CoreTable"]["Properties"]["TimeToLiveSpecification"]
        dynamodb.update_time_to_live(TableName=definition["TableName"], TimeToLiveSpecification=ttl)
    s3 = session.client("s3")
    bucket = settings().bucket_name
    existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    if bucket not in existing:
        s3.create_bucket(Bucket=bucket)
    sqs = session.client("sqs")
    dlq_url = sqs.create_queue(QueueName=f"{settings().jobs_queue_name}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    queue = all_resources["JobsQueue"]["Properties"]
    redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(queue["RedrivePolicy"]["maxReceiveCount"])}
    sqs.create_queue(
        QueueName=settings().jobs_queue_name,
        Attributes={"VisibilityTimeout": str(queue["VisibilityTimeout"]), "RedrivePolicy": json.dumps(redrive)},
    )

"""The SQS job queue: production implementation of the runtime's JobQueue port."""

from __future__ import annotations

from functools import lru_cache

from chalicelib.settings import settings
from chalicelib.storage import clients


@lru_cache(maxsize=4)
def _queue_url(queue_name: str) -> str:
    url: str = clients.sqs().get_queue_url(QueueName=queue_name)["QueueUrl"]
    return url


class SqsJobQueue:
    def send(self, body: str) -> None:
        clients.sqs().send_message(QueueUrl=_queue_url(settings().jobs_queue_name), MessageBody=body)

    def send_batch(self, bodies: list[str]) -> None:
        """Up to 10 messages in one SendMessageBatch; an entry SQS did not take is sent again on its own
        (which raises if it fails too)."""
        response = clients.sqs().send_message_batch(
            QueueUrl=_queue_url(settings().jobs_queue_name),
            Entries=[{"Id": str(index), "MessageBody": body} for index, body in enumerate(bodies)],
        )
        for failed in response.get("Failed", []):
            self.send(bodies[int(failed["Id"])])

    def receive(self, wait_seconds: int = 1, max_messages: int = 10) -> list[tuple[str, str]]:
        """(receipt handle, body) pairs: used by the local worker that stands in for the SQS trigger."""
        response = clients.sqs().receive_message(
            QueueUrl=_queue_url(settings().jobs_queue_name),
            WaitTimeSeconds=wait_seconds,
            MaxNumberOfMessages=max_messages,
        )
        return [(m["ReceiptHandle"], m["Body"]) for m in response.get("Messages", [])]

    def return_later(self, receipt_handle: str, seconds: int) -> None:
        """The received message delivered again in `seconds` (the local worker's injected delays and duplicates)."""
        clients.sqs().change_message_visibility(
            QueueUrl=_queue_url(settings().jobs_queue_name), ReceiptHandle=receipt_handle, VisibilityTimeout=seconds
        )

    def delete(self, receipt_handle: str) -> None:
        clients.sqs().delete_message(QueueUrl=_queue_url(settings().jobs_queue_name), ReceiptHandle=receipt_handle)


def reset() -> None:
    _queue_url.cache_clear()

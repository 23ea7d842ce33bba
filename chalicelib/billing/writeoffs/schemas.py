"""The write-off API contract (spec part 3 "Write-offs and holds": WriteOffRequest, WriteOffTarget,
WriteOffResponse, WriteOffListResponse). `amount` and `reversalReason` of a reversal, and
`reversedAmount` of the answer, are our extension (partial reversal)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from pydantic import Field

from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.billing.schemas import Amount, PaymentTargetResponse
from chalicelib.billing.writeoffs.models import WriteOff, WriteOffCreditType, WriteOffState
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery, ListResponse


class WriteOffTarget(Input):
    containerLocator: str = Field(min_length=1, max_length=64)
    containerType: ContainerType
    amount: Amount | None = None

    def target(self) -> PaymentTarget:
        return PaymentTarget.model_validate(self.model_dump())


class WriteOffRequest(Input):
    accountLocator: str = Field(min_length=1, max_length=64)
    targets: list[WriteOffTarget] = Field(min_length=1, max_length=100)


class WriteOffReverseRequest(Input):
    amount: Amount | None = None
    """Give back only this much (the last settled first); none: all the write-off still holds."""
    reversalReason: str | None = Field(default=None, max_length=1000)


class WriteOffListQuery(ListQuery):
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)


class WriteOffResponse(Response):
    locator: str
    accountLocator: str
    currency: str
    writeOffState: WriteOffState
    amount: Decimal
    creditType: WriteOffCreditType
    createdAt: datetime
    createdBy: str
    targets: list[PaymentTargetResponse]
    reversalReason: str | None = None
    reversedAt: datetime | None = None
    reversedAmount: Decimal

    @classmethod
    def of(cls, record: WriteOff) -> WriteOffResponse:
        return cls(
            **record.model_dump(include=set(cls.model_fields) - {"targets"}),
            targets=[PaymentTargetResponse.of_record(t) for t in record.targets],
        )


class WriteOffListResponse(ListResponse[WriteOffResponse]):
    pass

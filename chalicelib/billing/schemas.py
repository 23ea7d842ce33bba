"""What billing's API contracts share (installments/, invoices/, payments/, credit/ and writeoffs/ schemas.py
have their own): money in a request, payment targets, the credits of an invoice or account, and the credit
balance ledger (LedgerAccountResponse). Field names are the platform's."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from chalicelib.billing.models import ContainerType, CreditBalance, InvoiceCredit, LedgerLine
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse

TransactionMethod = Literal["ach", "cash", "eft", "standard", "wire"]


def _json_number(value: Any) -> Any:
    """A request body's numbers arrive as Decimal or int (http/request.py): money given as a string ("10",
    "1e2"), a boolean or anything else is the wrong type, a 400 (DECISIONS.md "Errors"), never converted."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise PydanticCustomError("decimal_type", "Input should be a JSON number")
    return value


Amount = Annotated[Decimal, BeforeValidator(_json_number)]
"""Money in a request body: a JSON number only (DECISIONS.md "Identifiers, time, money")."""


class IncludeReversedQuery(ListQuery):
    includeReversed: bool = False


class CreditResponse(Response):
    """Money an invoice received (CreditResponse): a payment, the credit balance, or a write-off."""

    locator: str
    creditState: Literal["posted", "distributed", "reversed"]
    creditType: Literal["payment", "creditDistribution", "writeOff", "shortfallWriteOff"]
    currency: str
    amount: Decimal
    createdAt: datetime
    accountLocator: str
    realizedAt: datetime | None = None
    reversedAt: datetime | None = None

    @classmethod
    def of(cls, credit: InvoiceCredit, account: str, currency: str) -> CreditResponse:
        return cls(
            locator=credit.locator,
            creditState=credit.creditState,
            creditType=credit.creditType,
            currency=currency,
            amount=credit.amount,
            createdAt=credit.createdAt,
            accountLocator=account,
            realizedAt=credit.createdAt,
            reversedAt=credit.reversedAt,
        )


class CreditListResponse(ListResponse[CreditResponse]):
    pass


class CreditItem(Input):
    containerLocator: str = Field(min_length=1, max_length=64)
    containerType: ContainerType
    amount: Amount | None = None


class CreditMoveRequest(Input):
    """What a payment's and a disbursement's create request begin with: the account, the configured type, the
    amount, its currency and the type's data."""

    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)
    type: str = Field(min_length=1, max_length=128)
    amount: Amount
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")
    data: dict[str, Any] = {}


class PaymentTargetResponse(Response):
    containerLocator: str
    containerType: ContainerType
    amount: Decimal | None = None


class LedgerQuery(ListQuery):
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")


class LedgerAccountLineItem(Response):
    faTransactionLocator: str
    faTransactionTime: datetime
    faTransactionNote: str
    accountingType: Literal["credit", "debit"]
    amount: Decimal

    @classmethod
    def of(cls, line: LedgerLine) -> LedgerAccountLineItem:
        return cls(
            faTransactionLocator=line.locator,
            faTransactionTime=line.time,
            faTransactionNote=line.note,
            accountingType=line.accountingType,
            amount=line.amount,
        )


class LedgerAccountResponse(Response):
    referenceLocator: str
    referenceType: Literal["accountCreditBalance"] = "accountCreditBalance"
    balance: Decimal
    currency: str
    lineItems: list[LedgerAccountLineItem]

    @classmethod
    def of(cls, balance: CreditBalance, lines: list[LedgerLine]) -> LedgerAccountResponse:
        return cls(
            referenceLocator=balance.accountLocator,
            balance=balance.balance,
            currency=balance.currency,
            lineItems=[LedgerAccountLineItem.of(line) for line in lines],
        )

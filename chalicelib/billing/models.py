"""Billing records as stored (DECISIONS.md "Billing"; socotra-semantics.md §4): installment lattices,
installments, invoices, payments, the applications of money to invoices and the account's credit
balance with its ledger lines. Every record of an account lives in the account's billing partition; its
writes bump the billing roots of the containers they change (repository.py), so invoicing and payments
of one container never interleave. Field names are the platform's (the responses are these models, mostly).

What one package owns is in its package: installments/models.py (lattices, installments, installment jobs),
invoices/models.py (invoices, applications, invoicing and generation jobs), payments/models.py (payments);
here is what several of billing's packages share (payment targets, the credits of an invoice, the credit
balance and its ledger lines, job and hold states).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel


class ContainerType(StrEnum):
    INVOICE = "invoice"
    ACCOUNT = "account"
    SUBPAYMENT = "subpayment"
    INVOICE_ITEM = "invoiceItem"


class SourceType(StrEnum):
    """What put money on an invoice: a payment, or the account's credit balance (a negative invoice,
    an overpayment)."""

    PAYMENT = "payment"
    CREDIT_BALANCE = "creditBalance"


class InvoiceCredit(BaseModel):
    """One credit of an invoice as its credits list shows it (CreditResponse): a payment's or a credit
    distribution's application, or what a write-off settled of it."""

    locator: str
    """The payment, credit distribution or write-off."""
    creditType: str
    creditState: str
    amount: Decimal
    createdAt: datetime
    reversedAt: datetime | None = None


class PaymentTarget(BaseModel):
    containerLocator: str
    containerType: ContainerType
    amount: Decimal | None = None


class LedgerLine(BaseModel):
    """A move of the account's credit balance: `credit` raises it, `debit` lowers it."""

    locator: str
    currency: str
    accountingType: str
    amount: Decimal
    note: str
    sourceType: str
    sourceLocator: str
    time: datetime


class CreditBalance(BaseModel):
    accountLocator: str
    currency: str
    balance: Decimal = Decimal(0)


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class HoldState(StrEnum):  # the states of a billing hold (holds/models.py)
    DRAFT = "draft"
    VALIDATED = "validated"
    ACTIVE = "active"
    DISCARDED = "discarded"
    RELEASED = "released"


class HoldTarget(StrEnum):  # what a billing hold holds: the account's invoicing or its delinquency handling
    INVOICING = "invoicing"
    DELINQUENCY = "delinquency"

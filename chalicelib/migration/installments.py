"""A migrated transaction's installments (issue 29): those the request brings become the transaction's lattice
and installments, as billing's own records (chalicelib/billing/installments/models.py), instead of billing building them
from its charges. Each installment runs from its start time to the next one's (the last to the term's end);
its items are the charges' installment items naming it (by number, 1 for the first). Locators derive from
(migration, account, policy, original ids): every run of the account derives the same ones."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from chalicelib.accounts.models import Account
from chalicelib.billing.installments import service as billing
from chalicelib.billing.installments.models import Installment, InstallmentItem, InstallmentLattice, LatticeFrame
from chalicelib.core.ids import derived_locator
from chalicelib.migration.models import ChargeMigrationRequest, TransactionMigrationRequest
from chalicelib.policies.models import Policy, Transaction
from chalicelib.priceable.models import Charge, Element


@dataclass
class Brought:
    """A migrated transaction that brings its installments, with its charges and their requests."""

    transaction: Transaction
    given: TransactionMigrationRequest
    term_start: datetime
    term_end: datetime
    priced: list[tuple[Charge, ChargeMigrationRequest]]
    root: Element


def of_transaction(
    policy: Policy, owner: Account, brought: Brought, seed: str
) -> tuple[InstallmentLattice, dict[str, Installment]]:
    """The lattice and the installments (by original id) of a transaction that brings its installments."""
    transaction, given, term_end, priced = brought.transaction, brought.given, brought.term_end, brought.priced
    element_types = dict(_types(brought.root))
    container = billing.container_for(policy.billingLevel, owner, policy.locator)
    lattice_locator = billing.lattice_locator(transaction)
    created_by = transaction.createdBy
    items: dict[int, list[tuple[Charge, str, Decimal]]] = defaultdict(list)
    for charge, request in priced:
        for item in request.installmentItems:
            items[item.installmentNumber].append((charge, item.id, item.amount))
    total = sum((amount for listed in items.values() for _, _, amount in listed), Decimal(0))
    frames: list[LatticeFrame] = []
    installments: dict[str, Installment] = {}
    ordered = sorted(given.installments, key=lambda installment: installment.startTime)
    for index, installment in enumerate(ordered):
        start = installment.startTime
        end = ordered[index + 1].startTime if index + 1 < len(ordered) else max(term_end, start)
        seconds = Decimal((end - start).total_seconds())
        number = given.installments.index(installment) + 1
        share = sum((amount for _, _, amount in items[number]), Decimal(0))
        frames.append(
            LatticeFrame(
                installmentStartTime=start,
                installmentEndTime=end,
                coverageStartTime=start,
                coverageEndTime=end,
                installmentDuration=seconds,
                coverageDuration=seconds,
                normalizedWeight=share / total if total else Decimal(0),
                generateTime=installment.generateTime,
                dueTime=installment.dueTime,
                autopayTime=installment.dueTime,
            )
        )
        locator = derived_locator(start, f"{seed}:installment:{installment.id}")
        installments[installment.id] = Installment(
            locator=locator,
            installmentLatticeLocator=lattice_locator,
            accountLocator=owner.locator,
            policyLocator=policy.locator,
            transactionLocator=transaction.locator,
            termLocator=transaction.termLocator,
            currency=policy.currency,
            timezone=policy.timezone,
            installmentFrameIndex=index,
            installmentStartTime=start,
            installmentEndTime=end,
            coverageStartTime=start,
            coverageEndTime=end,
            installmentDuration=seconds,
            coverageDuration=seconds,
            generateTime=installment.generateTime,
            dueTime=installment.dueTime,
            autopayTime=installment.dueTime,
            billingContainer=container,
            installmentItems=[
                InstallmentItem(
                    locator=derived_locator(start, f"{seed}:installmentItem:{original}"),
                    installmentLocator=locator,
                    chargeLocator=charge.locator,
                    elementLocator=charge.elementLocator,
                    elementStaticLocator=charge.elementStaticLocator,
                    elementType=element_types.get(charge.elementStaticLocator),
                    chargeType=charge.chargeType,
                    chargeCategory=str(charge.chargeCategory),
                    amount=amount,
                    createdAt=transaction.createdAt,
                    createdBy=created_by,
                )
                for charge, original, amount in items[number]
            ],
            createdAt=transaction.createdAt,
            createdBy=created_by,
            updatedAt=transaction.createdAt,
            updatedBy=created_by,
        )
    lattice = InstallmentLattice(
        locator=lattice_locator,
        accountLocator=owner.locator,
        policyLocator=policy.locator,
        billingContainer=container,
        transactionLocator=transaction.locator,
        termLocator=transaction.termLocator,
        currency=policy.currency,
        timezone=policy.timezone,
        termStartTime=brought.term_start,
        termEndTime=term_end,
        effectiveTime=transaction.effectiveTime,
        frames=frames,
        createdAt=transaction.createdAt,
        createdBy=created_by,
    )
    return lattice, installments


def _types(element: Element) -> Iterable[tuple[str, str]]:
    yield element.staticLocator, element.type
    for child in element.elements:
        yield from _types(child)

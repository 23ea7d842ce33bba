"""Grouping installments into invoices (invoices/generator.py): the invoicing plan's installmentGrouping,
immediate installments on invoices of their own, `next` installments riding on the next invoice; and the
installments a cancellation consolidates (invoices/consolidation.py)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from chalicelib.billing.installments.models import ChargeInvoicing
from chalicelib.billing.invoices import consolidation, generator
from chalicelib.configuration.billing_plans import (
    CancellationConsolidation,
    GroupingMatch,
    GroupingWindow,
    InstallmentGrouping,
)
from tests.unit.billing.support import NOW, START, installment

MONTH = timedelta(days=31)


def three_months():
    """February, March and April: one installment each, due at its start."""
    return [installment(f"I{n}", START + n * MONTH, [("E1", "premium", "100.00")]) for n in range(3)]


@pytest.mark.parametrize(
    "matching, window, sizes",
    [
        (GroupingMatch.GENERATE_TIME, GroupingWindow.START_AND_END, [1, 1, 1]),
        (GroupingMatch.START_TIME, GroupingWindow.START, [1, 1, 1]),
        (GroupingMatch.GENERATE_TIME, GroupingWindow.START, [3]),
        (GroupingMatch.ALL, GroupingWindow.START_AND_END, [3]),
    ],
)
def test_the_plans_grouping_decides_the_invoices_of_a_run(matching, window, sizes):
    groups = generator.groups(three_months(), NOW, InstallmentGrouping(matching, window))
    assert [len(group) for group in groups] == sizes
    invoices = generator.generate(three_months(), NOW, "u", grouping=InstallmentGrouping(matching, window))
    assert invoices[0].dueTime == START  # an invoice is due at its earliest installment's due time


def test_a_catch_up_window_joins_what_is_due_already_and_keeps_the_rest_apart():
    later = NOW + 20 * MONTH
    groups = generator.groups(
        three_months() + [installment("I9", later, [("E1", "premium", "1.00")])],
        START + 3 * MONTH,
        InstallmentGrouping(window=GroupingWindow.CATCH_UP),
    )
    assert [[i.locator for i in group] for group in groups] == [["I0", "I1", "I2"], ["I9"]]


def test_an_immediate_installment_is_never_grouped_and_a_rider_joins_the_earliest_group_of_its_container():
    scheduled = installment("I1", START, [("E1", "premium", "100.00")])
    immediate = installment("I2", START, [("E1", "fee", "5.00")]).model_copy(
        update={"invoicing": ChargeInvoicing.IMMEDIATE}
    )
    rider = installment("I3", START + 5 * MONTH, [("E1", "tax", "2.00")]).model_copy(
        update={"invoicing": ChargeInvoicing.NEXT}
    )
    elsewhere = installment("I4", START, [("E1", "tax", "3.00")], container="P2").model_copy(
        update={"invoicing": ChargeInvoicing.NEXT}
    )
    groups = generator.groups([scheduled, immediate], NOW, riders=[rider, elsewhere])
    assert sorted([i.locator for i in group] for group in groups) == [["I1", "I3"], ["I2"]]
    assert rider.dueTime == START and elsewhere.invoiceLocator is None


@pytest.mark.parametrize(
    "mode, chosen",
    [
        (CancellationConsolidation.NONE, []),
        (CancellationConsolidation.FUTURE, ["I1", "I2"]),
        (CancellationConsolidation.ALL, ["I0", "I1", "I2"]),
    ],
)
def test_a_cancellation_consolidates_the_frames_after_it_or_all(mode, chosen):
    uninvoiced = three_months()
    picked = consolidation.consolidated(uninvoiced, mode, START + MONTH + timedelta(days=3), NOW)
    assert [i.locator for i in picked] == chosen
    assert {i.dueTime for i in picked} <= {START, START + MONTH}
    if picked:
        assert {i.dueTime for i in picked} == {min(i.dueTime for i in three_months() if i.locator in chosen)}


def test_consolidation_takes_the_frames_ending_after_the_cancellation_in_locator_order():
    """The cancellation is effective at the end of February's installment (START + 30 days): February's
    coverage is all earned, so `future` leaves it; the one invoice is due when the earliest of the others is."""
    feb, mar, apr = three_months()
    picked = consolidation.consolidated([apr, feb, mar], CancellationConsolidation.FUTURE, feb.installmentEndTime, NOW)
    assert [i.locator for i in picked] == ["I1", "I2"]
    assert (mar.dueTime, apr.dueTime, feb.dueTime) == (START + MONTH, START + MONTH, START)


def test_consolidation_leaves_what_is_invoiced_and_is_not_due_before_now():
    feb, mar, apr = three_months()
    feb.invoiceLocator = "INV0"
    late = START + 2 * MONTH + timedelta(hours=1)
    picked = consolidation.consolidated([feb, mar, apr], CancellationConsolidation.ALL, START, late)
    assert [(i.locator, i.dueTime) for i in picked] == [("I1", late), ("I2", late)]
    assert feb.dueTime == START


def test_without_consolidation_nothing_is_invoiced_early_and_due_times_stay():
    installments = three_months()
    assert consolidation.consolidated(installments, CancellationConsolidation.NONE, START, NOW) == []
    assert [i.dueTime for i in installments] == [START, START + MONTH, START + 2 * MONTH]
    assert consolidation.consolidated(installments, CancellationConsolidation.FUTURE, START + 4 * MONTH, NOW) == []


def test_invoices_due_together_are_ordered_by_container_then_currency():
    account = installment("I2", START, [("E1", "premium", "10.00")])
    own_policy = installment("I0", START, [("E1", "premium", "20.00")], container="P2", policy="P2")
    euros = installment("I1", START, [("E1", "premium", "30.00")]).model_copy(update={"currency": "EUR"})
    groups = generator.groups([own_policy, euros, account], NOW)
    assert [[i.locator for i in group] for group in groups] == [["I1"], ["I2"], ["I0"]]  # A/EUR, A/USD, P2/USD


@pytest.mark.parametrize(
    "grouping",
    [
        InstallmentGrouping(GroupingMatch.START_TIME, GroupingWindow.START),
        InstallmentGrouping(window=GroupingWindow.CATCH_UP),
        InstallmentGrouping(GroupingMatch.ALL),
    ],
)
def test_every_grouping_keeps_containers_and_currencies_apart(grouping):
    installments = [
        installment("I1", START, [("E1", "premium", "10.00")]),
        installment("I2", START, [("E1", "premium", "20.00")], container="P2", policy="P2"),
        installment("I3", START, [("E1", "premium", "30.00")]).model_copy(update={"currency": "EUR"}),
    ]
    groups = generator.groups(installments, START + MONTH, grouping)
    assert sorted([i.locator for i in group] for group in groups) == [["I1"], ["I2"], ["I3"]]


def test_an_installment_due_just_as_it_is_invoiced_is_caught_up_with_the_overdue_ones():
    invoices = generator.generate(
        three_months(), START + MONTH, "u", grouping=InstallmentGrouping(window=GroupingWindow.CATCH_UP)
    )
    assert [(i.installmentLocators, i.dueTime, i.totalAmount) for i in invoices] == [
        (["I0", "I1"], START, Decimal("200.00")),
        (["I2"], START + 2 * MONTH, Decimal("100.00")),
    ]


def test_a_generated_run_takes_its_riders():
    scheduled = installment("I1", START, [("E1", "premium", "100.00")])
    rider = installment("I3", START + 5 * MONTH, [("E1", "tax", "2.00")]).model_copy(
        update={"invoicing": ChargeInvoicing.NEXT}
    )
    [invoice] = generator.generate([scheduled], NOW, "u", riders=[rider])
    assert (invoice.installmentLocators, invoice.totalAmount, invoice.dueTime) == (
        ["I1", "I3"],
        Decimal("102.00"),
        START,
    )
    assert rider.invoiceLocator == invoice.locator


def test_an_invoice_states_what_it_is_made_of():
    """Two installments of one policy's quote: one autopaid, its premium and the other's fee on their own items."""
    first = installment("I1", START, [("E1", "premium", "100.00"), ("E1", "fee", "5.00")]).model_copy(
        update={"quoteLocator": "Q1", "autopay": True}
    )
    first.installmentItems[0].elementType = "PersonalAuto"
    first.installmentItems[1].elementType = "PersonalAuto"
    second = installment("I2", START + MONTH, [("E1", "premium", "60.00")]).model_copy(
        update={"generateTime": START - timedelta(days=20), "autopayTime": START - timedelta(days=2)}
    )
    second.installmentItems[0].elementType = "PersonalAuto"
    seeds = []

    def locate(seed: str) -> str:
        seeds.append(seed)
        return f"L{len(seeds)}"

    invoice = generator.invoice([first, second], NOW, "clerk", locate)
    assert seeds == ["invoice:I1,I2", "invoiceItem:L1:P1:E1:premium:premium", "invoiceItem:L1:P1:E1:fee:fee"]
    assert (invoice.locator, invoice.accountLocator, invoice.billingContainer, invoice.currency, invoice.timezone) == (
        "L1",
        "A",
        "A",
        "USD",
        "America/New_York",
    )
    assert (invoice.startTime, invoice.endTime, invoice.dueTime) == (START, START + MONTH + timedelta(days=30), START)
    assert (invoice.generateTime, invoice.autopayTime, invoice.generatedTime) == (
        START - timedelta(days=20),
        START - timedelta(days=2),
        NOW,
    )
    assert (invoice.suppressAutopay, invoice.totalAmount, invoice.totalRemainingAmount) == (
        False,
        Decimal("165.00"),
        Decimal("165.00"),
    )
    assert (invoice.policyLocators, invoice.quoteLocators, invoice.createdAt, invoice.createdBy) == (
        ["P1"],
        ["Q1"],
        NOW,
        "clerk",
    )
    premium, fee = invoice.invoiceItems
    assert premium.model_dump() == {
        "locator": "L2",
        "invoiceLocator": "L1",
        "timezone": "America/New_York",
        "chargeCategory": "premium",
        "chargeType": "premium",
        "amount": Decimal("160.00"),
        "remainingAmount": Decimal("160.00"),
        "installmentItemLocators": ["I1-0", "I2-0"],
        "transactionLocators": ["TI1", "TI2"],
        "policyLocator": "P1",
        "quoteLocator": "Q1",
        "elementStaticLocator": "E1",
        "elementType": "PersonalAuto",
        "settlementTime": None,
        "unsettledTime": None,
    }
    assert (fee.locator, fee.amount, fee.installmentItemLocators) == ("L3", Decimal("5.00"), ["I1-1"])
    assert [item.invoiceItemLocator for item in first.installmentItems + second.installmentItems] == ["L2", "L3", "L2"]


def test_an_invoice_of_installments_none_autopaid_suppresses_autopay():
    [invoice] = generator.generate([installment("I1", START, [("E1", "premium", "10.00")])], NOW, "u")
    assert invoice.suppressAutopay is True and invoice.quoteLocators == []

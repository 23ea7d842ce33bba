"""The billing settings of a deployed (resolved) model, typed: installment, invoicing, delinquency,
excess-credit and shortfall-tolerance plans, payment types, account types' billing settings and the
tenant's billing defaults. What billing reads; pure, and built once per deployed version
(`DeployedConfiguration.billing_plans`).

A plan is looked up by name as the platform does, case-insensitively (an exact match first). A field a
plan leaves out takes the platform's default, the same that validation fills in (schema.py), so a
model deployed before a default existed reads the same: installment weights missing = 1, lead days 0
(or the deprecated configuration-wide `defaultGenerateLeadDays`/`defaultDueLeadDays`/`defaultAnchorMode`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, TypeVar

DEFAULT_MAX_INSTALLMENTS_PER_TERM = 1000
BUILTIN_LAPSE_TRANSACTION_TYPE = "cancellation"
"""The lapse transaction type of a delinquency plan that names none: the category's own name, which
works as a type when none of that category is configured (DECISIONS.md "Policy transactions")."""


class Cadence(StrEnum):
    NONE = "none"
    FULL_PAY = "fullPay"
    WEEKLY = "weekly"
    EVERY_OTHER_WEEK = "everyOtherWeek"
    MONTHLY = "monthly"
    QUARTERLY = "quarterly"
    SEMIANNUALLY = "semiannually"
    ANNUALLY = "annually"
    THIRTY_DAYS = "thirtyDays"
    EVERY_N_DAYS = "everyNDays"


class AnchorMode(StrEnum):
    """Which moment of an installment is pinned to the preferences' anchor."""

    GENERATE_DAY = "generateDay"
    TERM_START_DAY = "termStartDay"
    DUE_DAY = "dueDay"


class InvoiceFeeHandling(StrEnum):
    """How the invoice fees of the policies on one invoice combine."""

    MAX = "max"
    MIN = "min"
    SUM = "sum"
    WAIVE = "waive"


class CancellationConsolidation(StrEnum):
    NONE = "none"
    FUTURE = "future"
    ALL = "all"


class GroupingMatch(StrEnum):
    GENERATE_TIME = "generateTime"
    START_TIME = "startTime"
    ALL = "all"


class GroupingWindow(StrEnum):
    START = "start"
    START_AND_END = "startAndEnd"
    CATCH_UP = "catchUp"


class DelinquencyLevel(StrEnum):
    """`policy`: a policy's later past-due invoices join its open delinquency; `invoice`: one per invoice."""

    POLICY = "policy"
    INVOICE = "invoice"


class LapseTarget(StrEnum):
    """The state a lapse transaction is advanced to (`advanceLapseTo`)."""

    DRAFT = "draft"
    VALIDATED = "validated"
    PRICED = "priced"
    UNDERWRITTEN = "underwritten"
    ACCEPTED = "accepted"
    ISSUED = "issued"


class GraceOffsetBasis(StrEnum):
    GRACE_PERIOD_START = "gracePeriodStart"
    GRACE_PERIOD_END = "gracePeriodEnd"


class ExcludedDebits(StrEnum):
    """Which pending debits are netted before deciding how much credit to keep."""

    NONE = "none"
    PAST_DUE_INVOICES = "pastDueInvoices"
    ALL_INVOICES = "allInvoices"
    INVOICES_AND_UNBILLED_INSTALLMENTS = "invoicesAndUnbilledInstallments"


class DisbursementTarget(StrEnum):
    """The state an automatic disbursement is advanced to (`advanceDisbursementTo`)."""

    DRAFT = "draft"
    VALIDATED = "validated"
    APPROVED = "approved"
    EXECUTED = "executed"
    REVERSED = "reversed"
    REJECTED = "rejected"
    DISCARDED = "discarded"


class NegativeInvoiceSettlement(StrEnum):
    TO_OPEN_INVOICES = "toOpenInvoices"
    TO_CREDIT_BALANCE = "toCreditBalance"
    NEVER = "never"


class NegativeInvoiceTargets(StrEnum):
    OVERLAPPING_COVERAGE_PERIODS_ONLY = "overlappingCoveragePeriodsOnly"
    OVERLAPPING_COVERAGE_AND_EARLIER = "overlappingCoverageAndEarlier"
    ALL_OPEN_INVOICES = "allOpenInvoices"


class TargetInvoicePriority(StrEnum):
    BY_AMOUNT = "byAmount"
    SMALLEST_FIRST = "smallestFirst"
    EARLIEST_FIRST = "earliestFirst"


class NegativeInvoiceProcessing(StrEnum):
    ACCOUNT_LEVEL = "accountLevel"
    POLICY_LEVEL = "policyLevel"


class BackdatedInstallmentsBilling(StrEnum):
    """Installments already past when billed: `immediate` keep their due times; `deferDueDate`: due
    `dueLeadDays` after they are invoiced."""

    IMMEDIATE = "immediate"
    DEFER_DUE_DATE = "deferDueDate"


@dataclass(frozen=True)
class InstallmentPlan:
    name: str
    display_name: str | None
    cadence: Cadence
    installment_weights: tuple[Decimal, ...]
    """As configured; `weight(i)` reads them, 1 past their end."""
    max_installments_per_term: int
    generate_lead_days: int
    due_lead_days: int
    autopay_lead_days: Decimal
    anchor_mode: AnchorMode
    autopay: bool = False
    """`autopayLeadDays` is configured: invoices of the plan's installments are paid at their autopay time."""

    def weight(self, index: int) -> Decimal:
        """The weight of the term's installment number `index` (from 0): configured ones in order, then 1."""
        return self.installment_weights[index] if index < len(self.installment_weights) else Decimal(1)


@dataclass(frozen=True)
class InstallmentGrouping:
    """Which installments one invoice takes (`InstallmentGroupingDetails`)."""

    matching: GroupingMatch = GroupingMatch.GENERATE_TIME
    window: GroupingWindow = GroupingWindow.START_AND_END


@dataclass(frozen=True)
class InvoicingPlan:
    name: str | None
    """None for the platform's own plan (`DEFAULT_INVOICING_PLAN`)."""
    display_name: str | None
    installment_grouping: InstallmentGrouping
    invoice_fee_handling: InvoiceFeeHandling
    invoice_fee_amounts: Mapping[str, Decimal]
    """By ISO 4217 currency code."""
    consolidate_invoices_on_cancellation: CancellationConsolidation

    def invoice_fee_amount(self, currency: str) -> Decimal:
        """The fee configured for `currency` (0 when none is); `invoice_fee_handling` says how the fees of
        the policies on one invoice combine, or that they are waived."""
        return self.invoice_fee_amounts.get(currency.upper(), Decimal(0))


DEFAULT_INVOICING_PLAN = InvoicingPlan(
    name=None,
    display_name=None,
    installment_grouping=InstallmentGrouping(),
    invoice_fee_handling=InvoiceFeeHandling.WAIVE,
    invoice_fee_amounts={},
    consolidate_invoices_on_cancellation=CancellationConsolidation.NONE,
)
"""What a tenant without invoicing plans gets (no real package has one): installments grouped by
generate time within start and end (the OpenAPI definition's defaults), no invoice fee, no consolidation."""


@dataclass(frozen=True)
class PaymentType:
    """A configured payment type (`payments`): the `type` of a PaymentCreateRequest."""

    name: str
    display_name: str | None
    abstract: bool
    data: Mapping[str, Any]
    """Its data fields, PropertyRefs by name (datamodel.py validates against them)."""
    numbering_plan: str | None
    numbers_on_creation: bool
    """`numberingTrigger: creation`; otherwise a payment is numbered when validated."""
    default_searchable: bool


@dataclass(frozen=True)
class DelinquencyEvent:
    name: str
    offset_basis: GraceOffsetBasis
    offset_days: Decimal
    """From the basis; negative is before it."""


@dataclass(frozen=True)
class DelinquencyPlan:
    name: str
    display_name: str | None
    grace_period_days: int
    delinquency_level: DelinquencyLevel
    lapse_transaction_type: str
    """A transaction type of category cancellation, or the category's name."""
    advance_lapse_to: LapseTarget
    events: Mapping[str, DelinquencyEvent]


@dataclass(frozen=True)
class NegativeInvoiceHandling:
    """What becomes of a negative invoice (`NegativeInvoiceHandlingRef`); the defaults are validation's."""

    automatically_settle: NegativeInvoiceSettlement = NegativeInvoiceSettlement.TO_CREDIT_BALANCE
    prioritize_overlapping_coverage_periods: bool = False
    processing_mode: NegativeInvoiceProcessing = NegativeInvoiceProcessing.ACCOUNT_LEVEL
    target_invoice_priority: TargetInvoicePriority = TargetInvoicePriority.EARLIEST_FIRST
    target_invoices: NegativeInvoiceTargets = NegativeInvoiceTargets.ALL_OPEN_INVOICES
    yield_excess_to_credit_balance: bool = True


@dataclass(frozen=True)
class ExcessCreditPlan:
    name: str
    disburse_excess: bool
    disbursement_type: str | None
    exclude_debits: ExcludedDebits
    disbursement_thresholds: Mapping[str, Decimal]
    """By ISO 4217 currency code: credit above it is disbursed when `disburse_excess`."""
    advance_disbursement_to: DisbursementTarget
    auto_apply_excess_to_invoices: bool
    negative_invoice_handling: NegativeInvoiceHandling


@dataclass(frozen=True)
class ShortfallTolerancePlan:
    name: str
    currency_tolerances: Mapping[str, Decimal]
    """By ISO 4217 currency code: a payment short of an invoice by at most this settles it."""

    def tolerance(self, currency: str) -> Decimal:
        return self.currency_tolerances.get(currency.upper(), Decimal(0))


@dataclass(frozen=True)
class AccountTypeBilling:
    """What an account type (`accounts`) says about billing."""

    name: str
    invoice_numbering_plan: str | None
    """The numbering plan (`numberingPlans`) of its invoices' numbers."""
    invoice_document: str | None
    """Its `defaultInvoiceDocument`, else the tenant's."""
    payment_execution_retry_plan: str | None


T = TypeVar("T")


@dataclass(frozen=True)
class BillingPlans:
    """Every billing setting of one deployed version. The lookups answer None for a name the
    configuration does not define; with no name, the tenant's default plan (None when it names none)."""

    installment_plans: Mapping[str, InstallmentPlan]
    invoicing_plans: Mapping[str, InvoicingPlan]
    payment_types: Mapping[str, PaymentType]
    delinquency_plans: Mapping[str, DelinquencyPlan]
    excess_credit_plans: Mapping[str, ExcessCreditPlan]
    shortfall_tolerance_plans: Mapping[str, ShortfallTolerancePlan]
    account_types: Mapping[str, AccountTypeBilling]
    default_installment_plan: str | None = None
    default_invoicing_plan: str | None = None
    default_delinquency_plan: str | None = None
    default_excess_credit_plan: str | None = None
    default_shortfall_tolerance_plan: str | None = None
    backdated_installments_billing: BackdatedInstallmentsBilling = BackdatedInstallmentsBilling.IMMEDIATE
    serial_invoice_numbering: bool = False
    """`enableSerialInvoiceNumbering`."""

    @classmethod
    def of(cls, model: Mapping[str, Any]) -> BillingPlans:
        """The billing settings of a normal-form (best: resolved) model."""
        return cls(
            installment_plans=_collection(
                model, "installmentPlans", lambda name, plan: _installment_plan(name, plan, model)
            ),
            invoicing_plans=_collection(model, "invoicingPlans", _invoicing_plan),
            payment_types=_collection(model, "payments", _payment_type),
            delinquency_plans=_collection(model, "delinquencyPlans", _delinquency_plan),
            excess_credit_plans=_collection(model, "excessCreditPlans", _excess_credit_plan),
            shortfall_tolerance_plans=_collection(model, "shortfallTolerancePlans", _shortfall_tolerance_plan),
            account_types=_collection(model, "accounts", lambda name, account: _account_type(name, account, model)),
            default_installment_plan=_text(model.get("defaultInstallmentPlan")),
            default_invoicing_plan=_text(model.get("defaultInvoicingPlan")),
            default_delinquency_plan=_text(model.get("defaultDelinquencyPlan")),
            default_excess_credit_plan=_text(model.get("defaultExcessCreditPlan")),
            default_shortfall_tolerance_plan=_text(model.get("defaultShortfallTolerancePlan")),
            backdated_installments_billing=_choice(
                BackdatedInstallmentsBilling,
                model.get("defaultBackdatedInstallmentsBilling"),
                BackdatedInstallmentsBilling.IMMEDIATE,
            ),
            serial_invoice_numbering=model.get("enableSerialInvoiceNumbering") is True,
        )

    def installment_plan(self, name: str | None = None) -> InstallmentPlan | None:
        return _find(self.installment_plans, name or self.default_installment_plan)

    def invoicing_plan(self, name: str | None = None) -> InvoicingPlan | None:
        """Without a name, and with no default configured, the platform's own plan."""
        if name is None and self.default_invoicing_plan is None:
            return DEFAULT_INVOICING_PLAN
        return _find(self.invoicing_plans, name or self.default_invoicing_plan)

    def delinquency_plan(self, name: str | None = None) -> DelinquencyPlan | None:
        return _find(self.delinquency_plans, name or self.default_delinquency_plan)

    def excess_credit_plan(self, name: str | None = None) -> ExcessCreditPlan | None:
        return _find(self.excess_credit_plans, name or self.default_excess_credit_plan)

    def shortfall_tolerance_plan(self, name: str | None = None) -> ShortfallTolerancePlan | None:
        return _find(self.shortfall_tolerance_plans, name or self.default_shortfall_tolerance_plan)

    def payment_type(self, name: str) -> PaymentType | None:
        return _find(self.payment_types, name)

    def account_type(self, name: str) -> AccountTypeBilling | None:
        return _find(self.account_types, name)


def _find(entities: Mapping[str, T], name: str | None) -> T | None:
    """The entity named `name`: by its exact name, else by its name in lower case (as the platform
    looks names up); None when there is none or no name."""
    if name is None:
        return None
    found = entities.get(name)
    if found is None:
        lower = name.lower()
        found = next((entity for key, entity in entities.items() if key.lower() == lower), None)
    return found


def _collection(model: Mapping[str, Any], key: str, build: Callable[[str, Mapping[str, Any]], T]) -> dict[str, T]:
    collection = model.get(key)
    if not isinstance(collection, dict):
        return {}
    return {name: build(name, entity) for name, entity in collection.items() if isinstance(entity, dict)}


def _installment_plan(name: str, plan: Mapping[str, Any], root: Mapping[str, Any]) -> InstallmentPlan:
    return InstallmentPlan(
        name=name,
        display_name=_text(plan.get("displayName")),
        cadence=_choice(Cadence, plan.get("cadence"), None, f"installmentPlans.{name}.cadence"),
        installment_weights=tuple(_number(weight) for weight in plan.get("installmentWeights") or ()),
        max_installments_per_term=_integer(plan.get("maxInstallmentsPerTerm"), DEFAULT_MAX_INSTALLMENTS_PER_TERM),
        generate_lead_days=_integer(plan.get("generateLeadDays"), _integer(root.get("defaultGenerateLeadDays"), 0)),
        due_lead_days=_integer(plan.get("dueLeadDays"), _integer(root.get("defaultDueLeadDays"), 0)),
        autopay_lead_days=_number(plan.get("autopayLeadDays") or 0),
        anchor_mode=_choice(
            AnchorMode,
            plan.get("anchorMode"),
            _choice(AnchorMode, root.get("defaultAnchorMode"), AnchorMode.TERM_START_DAY),
        ),
        autopay=plan.get("autopayLeadDays") is not None,
    )


def _invoicing_plan(name: str, plan: Mapping[str, Any]) -> InvoicingPlan:
    grouping = plan.get("installmentGrouping") or {}
    return InvoicingPlan(
        name=name,
        display_name=_text(plan.get("displayName")),
        installment_grouping=InstallmentGrouping(
            matching=_choice(GroupingMatch, grouping.get("matching"), GroupingMatch.GENERATE_TIME),
            window=_choice(GroupingWindow, grouping.get("window"), GroupingWindow.START_AND_END),
        ),
        invoice_fee_handling=_choice(
            InvoiceFeeHandling, plan.get("invoiceFeeHandling"), None, f"invoicingPlans.{name}.invoiceFeeHandling"
        ),
        invoice_fee_amounts=_amounts(plan.get("invoiceFeeAmounts")),
        consolidate_invoices_on_cancellation=_choice(
            CancellationConsolidation, plan.get("consolidateInvoicesOnCancellation"), CancellationConsolidation.NONE
        ),
    )


def _payment_type(name: str, payment: Mapping[str, Any]) -> PaymentType:
    return PaymentType(
        name=name,
        display_name=_text(payment.get("displayName")),
        abstract=payment.get("abstract") is True,
        data=payment.get("data") or {},
        numbering_plan=_text(payment.get("numberingPlan")),
        numbers_on_creation=payment.get("numberingTrigger") == "creation",
        default_searchable=payment.get("defaultSearchable") is True,
    )


def _delinquency_plan(name: str, plan: Mapping[str, Any]) -> DelinquencyPlan:
    events = plan.get("events") or {}
    return DelinquencyPlan(
        name=name,
        display_name=_text(plan.get("displayName")),
        grace_period_days=_integer(plan.get("gracePeriodDays"), 0),
        delinquency_level=_choice(DelinquencyLevel, plan.get("delinquencyLevel"), DelinquencyLevel.POLICY),
        lapse_transaction_type=_text(plan.get("lapseTransactionType")) or BUILTIN_LAPSE_TRANSACTION_TYPE,
        advance_lapse_to=_choice(LapseTarget, plan.get("advanceLapseTo"), LapseTarget.ISSUED),
        events={
            event: DelinquencyEvent(
                name=event,
                offset_basis=_choice(
                    GraceOffsetBasis,
                    settings.get("offsetBasis"),
                    None,
                    f"delinquencyPlans.{name}.events.{event}.offsetBasis",
                ),
                offset_days=_number(settings.get("offsetDays") or 0),
            )
            for event, settings in events.items()
            if isinstance(settings, dict)
        },
    )


def _excess_credit_plan(name: str, plan: Mapping[str, Any]) -> ExcessCreditPlan:
    handling = plan.get("negativeInvoiceHandling") or {}
    defaults = NegativeInvoiceHandling()
    return ExcessCreditPlan(
        name=name,
        disburse_excess=plan.get("disburseExcess") is True,
        disbursement_type=_text(plan.get("disbursementType")),
        exclude_debits=_choice(ExcludedDebits, plan.get("excludeDebits"), ExcludedDebits.NONE),
        disbursement_thresholds=_amounts(plan.get("disbursementThresholds")),
        advance_disbursement_to=_choice(
            DisbursementTarget, plan.get("advanceDisbursementTo"), DisbursementTarget.DRAFT
        ),
        auto_apply_excess_to_invoices=plan.get("autoApplyExcessToInvoicesEnabled") is True,
        negative_invoice_handling=NegativeInvoiceHandling(
            automatically_settle=_choice(
                NegativeInvoiceSettlement,
                handling.get("automaticallySettleNegativeInvoices"),
                defaults.automatically_settle,
            ),
            prioritize_overlapping_coverage_periods=handling.get("prioritizeOverlappingCoveragePeriods") is True,
            processing_mode=_choice(
                NegativeInvoiceProcessing, handling.get("processingMode"), defaults.processing_mode
            ),
            target_invoice_priority=_choice(
                TargetInvoicePriority, handling.get("targetInvoicePriority"), defaults.target_invoice_priority
            ),
            target_invoices=_choice(NegativeInvoiceTargets, handling.get("targetInvoices"), defaults.target_invoices),
            yield_excess_to_credit_balance=handling.get("yieldExcessToCreditBalance") is not False,
        ),
    )


def _shortfall_tolerance_plan(name: str, plan: Mapping[str, Any]) -> ShortfallTolerancePlan:
    return ShortfallTolerancePlan(name=name, currency_tolerances=_amounts(plan.get("currencyTolerances")))


def _account_type(name: str, account: Mapping[str, Any], root: Mapping[str, Any]) -> AccountTypeBilling:
    return AccountTypeBilling(
        name=name,
        invoice_numbering_plan=_text(account.get("invoiceNumberingPlan")),
        invoice_document=_text(account.get("defaultInvoiceDocument")) or _text(root.get("defaultInvoiceDocument")),
        payment_execution_retry_plan=_text(account.get("paymentExecutionRetryPlan")),
    )


E = TypeVar("E", bound=StrEnum)


def _choice(kind: type[E], value: Any, default: E | None, where: str = "") -> E:
    """`value` as a member of `kind` (validation has put it in canonical casing), else `default`;
    ValueError for a value that is none of the members, or a missing one without a default."""
    if value is None:
        if default is None:
            raise ValueError(f"{where}: is required")
        return default
    return kind(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _integer(value: Any, default: int) -> int:
    """`value` when it is a whole number, else `default`."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return default
    if isinstance(value, Decimal) and not (value.is_finite() and value == value.to_integral_value()):
        return default
    return int(value)


def _number(value: Any) -> Decimal:
    """A number of the model (int or Decimal: models are read with Decimal floats) as a Decimal."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise ValueError(f"{value!r} is not a number")
    return Decimal(value)


def _amounts(value: Any) -> dict[str, Decimal]:
    """A map of amounts by currency code."""
    return {currency.upper(): _number(amount) for currency, amount in (value or {}).items()}

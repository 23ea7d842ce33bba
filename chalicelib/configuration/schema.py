"""The shape of a ConfigurationRef, written down as data.

One table drives validation (validator.py), casing (formatting.py), inheritance (resolve.py) and the
download layout (package.py), so that the four agree on what every field is. Field names, enum
values and required fields follow spec part 1 "Configuration entities", completed from the OpenAPI
definition where the spec is silent. Defaults are the ones config-packages.md says real, accepted
packages rely on (§4 what the server added, §9 required fields that real packages omit).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from chalicelib.configuration.billing_plans import Cadence

BUILTIN_TYPES = ("string", "int", "long", "decimal", "date", "datetime", "boolean", "guid")
STRING_MAX_LENGTH = 20000

NO_DEFAULT = object()
"""Returned by a default function when the field keeps no value."""


@dataclass(frozen=True)
class Scalar:
    """A JSON leaf. `text` is a string field that also takes numbers and booleans (min, max,
    defaultValue: real packages write `"min": 1900` and the platform's JSON reader accepts it)."""

    name: str


STRING = Scalar("string")
INTEGER = Scalar("integer")
NUMBER = Scalar("number")
BOOLEAN = Scalar("boolean")
TEXT = Scalar("text")
DATETIME = Scalar("datetime")
CURRENCY = Scalar("currency")
SCOPE = Scalar("scope")
PROPERTY_TYPE = Scalar("propertyType")
ANY = Scalar("any")


@dataclass(frozen=True)
class OneOf:
    """An enum. Values match case-insensitively and are rewritten to the canonical spelling."""

    values: tuple[str, ...]
    _by_lower: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_lower", {value.lower(): value for value in self.values})

    def canonical(self, value: str) -> str | None:
        return self._by_lower.get(value.lower())


@dataclass(frozen=True)
class Ref:
    """A string naming an entity: a key of one of the `targets` maps (dotted paths from the root).

    `quantifiers`: suffix characters allowed after the name (`PersonalVehicle+`).
    `concrete`: the named entity must not be abstract.
    `builtin`: a name accepted without a definition (`lapseTransactionType: "cancellation"`).
    `category`: a named transaction type must have this category.
    """

    targets: tuple[str, ...]
    quantifiers: str = ""
    concrete: bool = False
    builtin: str | None = None
    category: str | None = None


@dataclass(frozen=True)
class ListOf:
    item: "Kind"


@dataclass(frozen=True)
class MapOf:
    """A JSON object with free keys. `keys`: "any", "name" (an identifier), "option" (an
    identifier, optionally marked `*` as the default option) or "currency" (ISO 4217 code)."""

    value: "Kind"
    keys: str = "any"


@dataclass(frozen=True)
class Obj:
    schema: str


Kind = Scalar | OneOf | Ref | ListOf | MapOf | Obj
Default = Any | Callable[[dict[str, Any], dict[str, Any]], Any]


@dataclass(frozen=True)
class Schema:
    """An object type. `defaults` values are either the value itself or a function
    (object, configuration root) -> value | NO_DEFAULT, applied in order to absent fields.
    `answered`: fields the platform's definition requires in the data model's answer (answer.py) that
    an entity may leave out (no default, or one that an entity extending another does not get), and
    the value answered when neither the entity nor what it inherits gives one. The model and its
    download go on leaving them out, as the platform's download does."""

    fields: dict[str, Kind]
    required: frozenset[str] = frozenset()
    defaults: dict[str, Default] = field(default_factory=dict)
    answered: dict[str, Any] = field(default_factory=dict)
    _by_lower: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_lower", {name.lower(): name for name in self.fields})

    def canonical_key(self, key: str) -> str | None:
        return self._by_lower.get(key.lower())


# Enum value sets ---------------------------------------------------------------------------------

DURATION_BASIS = OneOf(("years", "months", "weeks", "days", "hours"))
SELECTION_TIME_BASIS = OneOf(("policyStartTime", "termStartTime", "transactionEffectiveTime", "currentTime"))
AVAILABILITY_TIME_BASIS = OneOf(("policyStartTime", "termStartTime"))
NUMBERING_TRIGGER = OneOf(("creation", "validation"))
TRANSACTION_CATEGORY = OneOf(
    ("issuance", "change", "renewal", "cancellation", "reinstatement", "reversal", "aggregate")
)
CHARGE_CATEGORY = OneOf(
    ("cededPremium", "credit", "fee", "invoiceFee", "none", "nonFinancial", "premium", "surcharge", "tax")
)
BUILTIN_TYPE = OneOf(BUILTIN_TYPES)
EVENT_ALIGNMENT = OneOf(("weekStart", "monthStart", "yearStart"))

# Shared kinds ------------------------------------------------------------------------------------

ELEMENT_COLLECTIONS = ("coverages", "exposures", "exposureGroups", "policyLines")
PROPERTIES = MapOf(Obj("PropertyRef"), keys="name")
CONTACTS = MapOf(ListOf(STRING))
ELEMENT_REFS = ListOf(Ref(ELEMENT_COLLECTIONS, quantifiers="?*+!", concrete=True))
COVERAGE_TERM_REFS = ListOf(Ref(("coverageTerms",), quantifiers="?!"))
CHARGE_REFS = ListOf(Ref(("charges",)))
DOCUMENT_REFS = ListOf(Ref(("documents",)))
NUMBERING_PLAN = Ref(("numberingPlans",))


def _collection(schema: str, *, named: bool = False) -> MapOf:
    """A named collection; `named` entities become generated types, so their names must be
    identifiers (docs.socotra.com, configuration/general-topics/identifiers)."""
    return MapOf(Obj(schema), keys="name" if named else "any")


def _max_length_for_strings(prop: dict[str, Any], _root: dict[str, Any]) -> Any:
    """The server adds maxLength 20000 to every string-based field that lacks one."""
    type_name = prop.get("type")
    if isinstance(type_name, str) and type_name.rstrip("?*+!") == "string":
        return STRING_MAX_LENGTH
    return NO_DEFAULT


def _from_root(key: str, fallback: Any) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
    """A default taken from a (deprecated) configuration-wide setting when the package has it."""

    def default(_obj: dict[str, Any], root: dict[str, Any]) -> Any:
        value = root.get(key)
        return fallback if value is None else value

    return default


def _same_as(key: str) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
    def default(obj: dict[str, Any], _root: dict[str, Any]) -> Any:
        value = obj.get(key)
        return NO_DEFAULT if value is None else value

    return default


# Object types ------------------------------------------------------------------------------------

_ENTITY_BASE: dict[str, Kind] = {
    "displayName": STRING,
    "extend": STRING,
    "abstract": BOOLEAN,
    "defaultSearchable": BOOLEAN,
}

_PRODUCER_ANSWERED = {"abstract": False, "defaultSearchable": False, "extend": ""}

SCHEMAS: dict[str, Schema] = {
    "ConfigurationRef": Schema(
        fields={
            "defaultAutoRenewalPlan": Ref(("autoRenewalPlans",)),
            "defaultAuxDataSettings": Ref(("auxDataSettings",)),
            "defaultCurrency": CURRENCY,
            "defaultDelinquencyPlan": Ref(("delinquencyPlans",)),
            "defaultExcessCreditPlan": Ref(("excessCreditPlans",)),
            "defaultInstallmentPlan": Ref(("installmentPlans",)),
            "defaultInvoiceDocument": Ref(("documents",)),
            "defaultInvoicingPlan": Ref(("invoicingPlans",)),
            "defaultRetryPlan": Ref(("retryPlans",)),
            "defaultShortfallTolerancePlan": Ref(("shortfallTolerancePlans",)),
            "defaultDisbursementNumberingPlanName": NUMBERING_PLAN,
            "defaultPaymentNumberingPlanName": NUMBERING_PLAN,
            "defaultTimeZone": STRING,
            "defaultBackdatedInstallmentsBilling": OneOf(("immediate", "deferDueDate")),
            "defaultDurationBasis": DURATION_BASIS,
            "defaultScheduleUploadErrorsLimit": INTEGER,
            "defaultSearchable": BOOLEAN,
            "enableEntityAnonymization": BOOLEAN,
            "enableSerialInvoiceNumbering": BOOLEAN,
            "defaultTermDuration": NUMBER,
            "contactRoles": ListOf(STRING),
            "customFonts": ListOf(STRING),
            "lossCategories": ListOf(STRING),
            "defaultAnchorMode": OneOf(("generateDay", "termStartDay", "dueDay")),
            "defaultBillingLevel": OneOf(("account", "inherit", "policy")),
            "defaultBillingPlan": STRING,
            "defaultLapseType": STRING,
            "defaultRegion": STRING,
            "defaultDueLeadDays": INTEGER,
            "defaultGenerateLeadDays": INTEGER,
            "bootstrap": Obj("BootstrapRef"),
            "dataAccessControl": Obj("DataAccessControlRef"),
            "producerManagement": Obj("ProducerManagementRef"),
            "workManagement": Obj("WorkManagementRef"),
            "assistant": ANY,
            "accounts": _collection("AccountRef", named=True),
            "products": _collection("ProductRef", named=True),
            "charges": _collection("ChargeRef", named=True),
            "coverages": _collection("ElementRef", named=True),
            "exposures": _collection("ElementRef", named=True),
            "exposureGroups": _collection("ElementRef", named=True),
            "policyLines": _collection("ElementRef", named=True),
            "coverageTerms": _collection("CoverageTermRef", named=True),
            "dataTypes": _collection("DataTypeRef", named=True),
            "documents": _collection("DocumentConfigRef", named=True),
            "tables": _collection("TableRef", named=True),
            "rangeTables": _collection("RangeTableRef", named=True),
            "constraintTables": _collection("ConstraintTableRef", named=True),
            "payments": _collection("PaymentRef", named=True),
            "disbursements": _collection("DisbursementRef", named=True),
            "fnol": _collection("FnolRef", named=True),
            "contacts": _collection("ContactRef", named=True),
            "schedules": _collection("ScheduleRef", named=True),
            "losses": _collection("LossRef", named=True),
            "claims": _collection("ClaimRef", named=True),
            "transactionTypes": _collection("TransactionTypeRef", named=True),
            "automations": _collection("AutomationPluginRef"),
            "autoRenewalPlans": _collection("AutoRenewalPlanRef"),
            "auxDataSettings": _collection("AuxDataSettingsRef"),
            "billingPlans": _collection("BillingPlanRef"),
            "consolidatedDocuments": _collection("ConsolidatedDocumentConfigRef"),
            "customEvents": _collection("CustomEventRef"),
            "delinquencyPlans": _collection("DelinquencyPlanRef"),
            "excessCreditPlans": _collection("ExcessCreditPlanRef"),
            "externalNumberingPlans": _collection("ExternalNumberingPlanRef"),
            "installmentPlans": _collection("InstallmentPlanRef"),
            "invoicingPlans": _collection("InvoicingPlanRef"),
            "jurisdictions": _collection("JurisdictionRef"),
            "moratoriums": _collection("MoratoriumRef"),
            "numberingPlans": _collection("NumberingPlanRef"),
            "regions": _collection("RegionRef"),
            "retryPlans": _collection("RetryPlanRef"),
            "reversalTypes": _collection("ReversalTypeRef"),
            "secrets": _collection("SecretRef"),
            "shortfallTolerancePlans": _collection("ShortfallTolerancePlanRef"),
            "templateSnippets": _collection("TemplateSnippetConfigRef"),
            "tenantCustomEvents": _collection("TenantCustomEventRef"),
        },
    ),
    "AccountRef": Schema(
        fields={
            **_ENTITY_BASE,
            "data": PROPERTIES,
            "defaultInvoiceDocument": Ref(("documents",)),
            "invoiceNumberingPlan": NUMBERING_PLAN,
            "numberingPlan": NUMBERING_PLAN,
            "paymentExecutionRetryPlan": Ref(("retryPlans",)),
            "numberingTrigger": NUMBERING_TRIGGER,
            "contacts": CONTACTS,
        },
        required=frozenset({"data"}),
        defaults={"data": {}, "numberingTrigger": "validation"},
    ),
    "ProductRef": Schema(
        fields={
            **_ENTITY_BASE,
            "defaultAutoRenewalPlan": Ref(("autoRenewalPlans",)),
            "defaultDelinquencyPlan": Ref(("delinquencyPlans",)),
            "defaultInstallmentPlan": Ref(("installmentPlans",)),
            "defaultShortfallTolerancePlan": Ref(("shortfallTolerancePlans",)),
            "externalNumberingPlan": Ref(("externalNumberingPlans",)),
            "numberingPlan": NUMBERING_PLAN,
            "numberingString": STRING,
            "riskAssessmentCriteria": STRING,
            "requiresJurisdiction": BOOLEAN,
            "reservedPolicyNumberRequired": BOOLEAN,
            "withPrecommitReapplication": BOOLEAN,
            "availability": Obj("AvailabilityRef"),
            "defaultDurationBasis": DURATION_BASIS,
            "defaultTermDuration": NUMBER,
            "numberingTrigger": NUMBERING_TRIGGER,
            "producerQualification": OneOf(("none", "license", "appointment")),
            "data": PROPERTIES,
            "staticData": PROPERTIES,
            "contacts": CONTACTS,
            "workplanTriggers": MapOf(ListOf(STRING)),
            "charges": CHARGE_REFS,
            "contents": ELEMENT_REFS,
            "coverageTerms": COVERAGE_TERM_REFS,
            "documents": DOCUMENT_REFS,
            "eligibleAccountTypes": ListOf(Ref(("accounts",), concrete=True)),
            "eligibleTransactionTypes": ListOf(Ref(("transactionTypes",))),
            "scheduledEvents": ListOf(STRING),
            "defaultBillingPlan": STRING,
            "pluralType": STRING,
        },
    ),
    "ElementRef": Schema(
        fields={
            **_ENTITY_BASE,
            "schedule": Ref(("schedules",)),
            "availability": Obj("AvailabilityRef"),
            "data": PROPERTIES,
            "charges": CHARGE_REFS,
            "contents": ELEMENT_REFS,
            "coverageTerms": COVERAGE_TERM_REFS,
            "pluralType": STRING,
        },
    ),
    "CoverageTermRef": Schema(
        fields={
            "type": OneOf(("splitLimit", "deductible", "limit")),
            "displayName": STRING,
            "availability": Obj("AvailabilityRef"),
            "value": Obj("PropertyRef"),
            "options": MapOf(Obj("CoverageTermOptionRef"), keys="option"),
        },
        required=frozenset({"type"}),
    ),
    "CoverageTermOptionRef": Schema(
        fields={"value": NUMBER, "displayName": STRING, "displayHints": Obj("DisplayHintsRef"), "tag": STRING},
        required=frozenset({"value"}),
    ),
    "DisplayHintsRef": Schema(fields={"displayName": STRING, "displayOrder": INTEGER}),
    "JurisdictionRef": Schema(fields={"displayHints": Obj("DisplayHintsRef")}),
    "RegionRef": Schema(fields={"displayName": STRING, "numberingString": STRING}),
    "DataTypeRef": Schema(fields={**_ENTITY_BASE, "data": PROPERTIES}, required=frozenset({"data"})),
    "AvailabilityRef": Schema(
        fields={
            "availabilityTimeBasis": AVAILABILITY_TIME_BASIS,
            "retirementTimeBasis": AVAILABILITY_TIME_BASIS,
            "availableAfter": DATETIME,
            "removeOnRenewal": BOOLEAN,
            "removeOnRenewalAfter": DATETIME,
            "retire": BOOLEAN,
            "retireAfter": DATETIME,
        },
        defaults={"availabilityTimeBasis": "termStartTime", "retirementTimeBasis": "termStartTime"},
    ),
    "PropertyRef": Schema(
        fields={
            "displayName": STRING,
            "type": PROPERTY_TYPE,
            "defaultValue": TEXT,
            "min": TEXT,
            "max": TEXT,
            "regex": STRING,
            "scope": SCOPE,
            "availability": Obj("AvailabilityRef"),
            "constraint": Obj("PropertyConstraint"),
            "maxLength": INTEGER,
            "minLength": INTEGER,
            "precision": INTEGER,
            "restrictedData": ANY,
            "roundingMode": OneOf(("ceiling", "down", "floor", "halfDown", "halfEven", "halfUp", "up")),
            "searchable": BOOLEAN,
            "options": ListOf(TEXT),
            "tag": ListOf(STRING),
        },
        defaults={"type": "string", "maxLength": _max_length_for_strings},
    ),
    "PropertyConstraint": Schema(
        fields={
            "table": Ref(("constraintTables",)),
            "column": STRING,
            "where": MapOf(Obj("ConditionValueRef")),
        },
        required=frozenset({"table", "column", "where"}),
    ),
    "ConditionValueRef": Schema(
        fields={"key": STRING, "values": ListOf(STRING)}, required=frozenset({"key", "values"})
    ),
    "ChargeRef": Schema(
        fields={
            "category": CHARGE_CATEGORY,
            "handling": OneOf(("flat", "normal", "retention")),
            "invoicing": OneOf(("immediate", "next", "scheduled")),
            "transactionBundlingEnabled": BOOLEAN,
            "displayName": STRING,
        },
        required=frozenset({"category"}),
        defaults={"handling": "normal", "invoicing": "scheduled", "transactionBundlingEnabled": False},
    ),
    "BillingPlanRef": Schema(
        fields={"billingLevel": OneOf(("account", "inherit", "policy")), "displayName": STRING},
        required=frozenset({"billingLevel"}),
    ),
    "DelinquencyPlanRef": Schema(
        fields={
            "gracePeriodDays": INTEGER,
            "displayName": STRING,
            "advanceLapseTo": OneOf(("draft", "validated", "priced", "underwritten", "accepted", "issued")),
            "delinquencyLevel": OneOf(("policy", "invoice")),
            "lapseTransactionType": Ref(("transactionTypes",), builtin="cancellation", category="cancellation"),
            "events": MapOf(Obj("DelinquencyEventConfiguration")),
        },
        required=frozenset({"gracePeriodDays"}),
        defaults={"delinquencyLevel": "policy"},
    ),
    "DelinquencyEventConfiguration": Schema(
        fields={"offsetBasis": OneOf(("gracePeriodStart", "gracePeriodEnd")), "offsetDays": NUMBER},
        required=frozenset({"offsetBasis", "offsetDays"}),
    ),
    "InstallmentPlanRef": Schema(
        fields={
            "cadence": OneOf(tuple(cadence.value for cadence in Cadence)),
            "anchorMode": OneOf(("generateDay", "termStartDay", "dueDay")),
            "dueLeadDays": INTEGER,
            "generateLeadDays": INTEGER,
            "maxInstallmentsPerTerm": INTEGER,
            "installmentWeights": ListOf(NUMBER),
            "displayName": STRING,
            "autopayLeadDays": NUMBER,
        },
        required=frozenset({"cadence"}),
        defaults={
            "anchorMode": _from_root("defaultAnchorMode", "termStartDay"),
            "dueLeadDays": _from_root("defaultDueLeadDays", 0),
            "generateLeadDays": _from_root("defaultGenerateLeadDays", 0),
            "maxInstallmentsPerTerm": 1000,
            "installmentWeights": [],
        },
    ),
    "InvoicingPlanRef": Schema(
        fields={
            "consolidateInvoicesOnCancellation": OneOf(("none", "future", "all")),
            "invoiceFeeHandling": OneOf(("max", "min", "sum", "waive")),
            "invoiceFeeAmounts": MapOf(NUMBER, keys="currency"),
            "installmentGrouping": Obj("InstallmentGroupingDetails"),
            "displayName": STRING,
        },
        required=frozenset({"consolidateInvoicesOnCancellation", "invoiceFeeHandling", "invoiceFeeAmounts"}),
        answered={"installmentGrouping": {"matching": "generateTime", "window": "startAndEnd"}},
    ),
    "InstallmentGroupingDetails": Schema(
        fields={
            "matching": OneOf(("generateTime", "startTime", "all")),
            "window": OneOf(("start", "startAndEnd", "catchUp")),
        },
        defaults={"matching": "generateTime", "window": "startAndEnd"},
    ),
    "AutoRenewalPlanRef": Schema(
        fields={
            "generateAutoRenewals": BOOLEAN,
            "newTermDuration": INTEGER,
            "renewalAcceptLeadDays": INTEGER,
            "renewalCreateLeadDays": INTEGER,
            "renewalIssueLeadDays": INTEGER,
            "renewalTransactionType": Ref(("transactionTypes",), builtin="renewal", category="renewal"),
        },
        required=frozenset({"generateAutoRenewals"}),
    ),
    "RetryPlanRef": Schema(
        fields={"attempts": INTEGER, "hoursBetweenAttempts": ListOf(NUMBER)},
        required=frozenset({"attempts"}),
        defaults={"hoursBetweenAttempts": []},
    ),
    "PaymentRef": Schema(
        fields={
            **_ENTITY_BASE,
            "numberingPlan": NUMBERING_PLAN,
            "numberingTrigger": NUMBERING_TRIGGER,
            "data": PROPERTIES,
        },
        defaults={"defaultSearchable": False, "numberingTrigger": "validation"},
        answered={
            "abstract": False,
            "defaultSearchable": False,
            "extend": "",
            "numberingPlan": "",
            "numberingTrigger": "validation",
        },
    ),
    "DisbursementRef": Schema(
        fields={
            **_ENTITY_BASE,
            "numberingPlan": NUMBERING_PLAN,
            "numberingTrigger": NUMBERING_TRIGGER,
            "data": PROPERTIES,
        },
        required=frozenset({"data"}),
    ),
    "ReversalTypeRef": Schema(
        fields={"creditType": OneOf(("any", "creditDistribution", "payment"))},
        required=frozenset({"creditType"}),
    ),
    "ShortfallTolerancePlanRef": Schema(
        fields={"currencyTolerances": MapOf(NUMBER, keys="currency")},
        required=frozenset({"currencyTolerances"}),
    ),
    "ExcessCreditPlanRef": Schema(
        fields={
            "disburseExcess": BOOLEAN,
            "advanceDisbursementTo": OneOf(
                ("draft", "validated", "approved", "executed", "reversed", "rejected", "discarded")
            ),
            "autoApplyExcessToInvoicesEnabled": BOOLEAN,
            "disbursementType": Ref(("disbursements",)),
            "excludeDebits": OneOf(("none", "pastDueInvoices", "allInvoices", "invoicesAndUnbilledInstallments")),
            "negativeInvoiceHandling": Obj("NegativeInvoiceHandlingRef"),
            "disbursementThresholds": MapOf(NUMBER, keys="currency"),
        },
        required=frozenset({"disburseExcess"}),
        defaults={
            "advanceDisbursementTo": "draft",
            "autoApplyExcessToInvoicesEnabled": False,
            "excludeDebits": "none",
            "negativeInvoiceHandling": {},
            "disbursementThresholds": {},
        },
        answered={"disbursementType": ""},
    ),
    "NegativeInvoiceHandlingRef": Schema(
        fields={
            "automaticallySettleNegativeInvoices": OneOf(("toOpenInvoices", "toCreditBalance", "never")),
            "prioritizeOverlappingCoveragePeriods": BOOLEAN,
            "processingMode": OneOf(("accountLevel", "policyLevel")),
            "targetInvoicePriority": OneOf(("byAmount", "smallestFirst", "earliestFirst")),
            "targetInvoices": OneOf(
                ("overlappingCoveragePeriodsOnly", "overlappingCoverageAndEarlier", "allOpenInvoices")
            ),
            "yieldExcessToCreditBalance": BOOLEAN,
        },
        defaults={
            "automaticallySettleNegativeInvoices": "toCreditBalance",
            "prioritizeOverlappingCoveragePeriods": False,
            "processingMode": "accountLevel",
            "targetInvoicePriority": "earliestFirst",
            "targetInvoices": "allOpenInvoices",
            "yieldExcessToCreditBalance": True,
        },
    ),
    "NumberingPlanRef": Schema(
        fields={
            "copyFromQuote": BOOLEAN,
            "format": STRING,
            "initialCoreNumber": STRING,
            "initialQuoteCoreNumber": STRING,
            "quoteNumberFormat": STRING,
            "termNumberFormat": STRING,
            "displayName": STRING,
            "productScope": STRING,
        },
        required=frozenset({"copyFromQuote", "format", "initialCoreNumber"}),
        defaults={
            "initialQuoteCoreNumber": _same_as("initialCoreNumber"),
            "quoteNumberFormat": _same_as("format"),
            "termNumberFormat": "{policyNumber}-{termNumberPlusOne}",
        },
    ),
    "ExternalNumberingPlanRef": Schema(
        fields={
            "triggerQuoteState": OneOf(
                (
                    "draft",
                    "validated",
                    "earlyUnderwritten",
                    "priced",
                    "underwritten",
                    "accepted",
                    "issued",
                    "underwrittenBlocked",
                    "declined",
                    "rejected",
                    "refused",
                    "discarded",
                )
            ),
            "displayName": STRING,
        },
        required=frozenset({"triggerQuoteState"}),
    ),
    "TemplateSnippetConfigRef": Schema(
        fields={"selectionTimeBasis": SELECTION_TIME_BASIS, "displayName": STRING},
        defaults={"selectionTimeBasis": "termStartTime"},
    ),
    "ScheduleRef": Schema(
        fields={**_ENTITY_BASE, "resetOnRenewal": BOOLEAN, "data": PROPERTIES},
        required=frozenset({"resetOnRenewal", "data"}),
    ),
    "LossRef": Schema(
        fields={
            **_ENTITY_BASE,
            "category": STRING,
            "data": PROPERTIES,
            "coverageTypes": ListOf(Ref(("coverages",))),
        },
        required=frozenset({"category", "data"}),
    ),
    "ClaimRef": Schema(fields={**_ENTITY_BASE, "claimCategory": STRING}, required=frozenset({"claimCategory"})),
    "FnolRef": Schema(
        fields={
            **_ENTITY_BASE,
            "data": PROPERTIES,
            "numberingPlan": NUMBERING_PLAN,
            "contacts": CONTACTS,
            "lossTypes": ListOf(Ref(("losses",))),
        },
        required=frozenset({"data"}),
    ),
    "ContactRef": Schema(fields={**_ENTITY_BASE, "data": PROPERTIES}, required=frozenset({"data"})),
    "TableRef": Schema(
        fields={"columns": MapOf(Obj("ColumnRef")), "selectionTimeBasis": SELECTION_TIME_BASIS},
        required=frozenset({"columns"}),
        defaults={"selectionTimeBasis": "termStartTime"},
    ),
    "RangeTableRef": Schema(
        fields={
            "columns": MapOf(Obj("ColumnRef")),
            "selectionTimeBasis": SELECTION_TIME_BASIS,
            "rangeStart": STRING,
            "rangeEnd": STRING,
        },
        required=frozenset({"columns", "rangeStart"}),
        defaults={"selectionTimeBasis": "termStartTime"},
    ),
    "ColumnRef": Schema(
        # mgt-commercial's tables/Construction has a column without isKey.
        fields={"dataType": BUILTIN_TYPE, "isKey": BOOLEAN},
        required=frozenset({"dataType"}),
        defaults={"isKey": False},
    ),
    "ConstraintTableRef": Schema(
        fields={"columns": MapOf(Obj("ConstraintColumnRef")), "selectionTimeBasis": SELECTION_TIME_BASIS},
        required=frozenset({"columns"}),
        defaults={"selectionTimeBasis": "termStartTime"},
    ),
    "ConstraintColumnRef": Schema(
        fields={"dataType": BUILTIN_TYPE, "makeDistinct": BOOLEAN},
        required=frozenset({"dataType", "makeDistinct"}),
    ),
    "DocumentConfigRef": Schema(
        fields={
            "format": OneOf(("text", "html", "pdf", "jpg", "jpeg", "doc", "docx", "xls", "xlsx", "csv", "txt", "zip")),
            "rendering": OneOf(("dynamic", "prerendered")),
            "scope": OneOf(("transaction", "policy", "term", "segment", "invoice")),
            "selectionTimeBasis": SELECTION_TIME_BASIS,
            "trigger": OneOf(
                (
                    "validated",
                    "priced",
                    "accepted",
                    "underwritten",
                    "issued",
                    "generated",
                    "declined",
                    "rejected",
                    "refused",
                )
            ),
            "customFonts": ListOf(STRING),
            "templateSnippets": ListOf(Ref(("templateSnippets",))),
            "displayName": STRING,
            "margin": Obj("DocumentMarginRef"),
            "pageSize": OneOf(("letter", "legal", "A3", "A4", "A5", "B4", "B5")),
            "portrait": BOOLEAN,
        },
        required=frozenset({"format", "rendering", "scope", "trigger"}),
        defaults={"selectionTimeBasis": "termStartTime", "customFonts": [], "templateSnippets": []},
    ),
    "DocumentMarginRef": Schema(fields={"bottom": NUMBER, "left": NUMBER, "right": NUMBER, "top": NUMBER}),
    "ConsolidatedDocumentConfigRef": Schema(
        fields={
            "consolidatedDocuments": DOCUMENT_REFS,
            "displayName": STRING,
            "leadingDocumentTemplate": STRING,
            "pageNumbering": Obj("ConsolidatedPageNumberingRef"),
        },
        required=frozenset({"consolidatedDocuments"}),
    ),
    "ConsolidatedPageNumberingRef": Schema(
        fields={
            "enableNumbering": BOOLEAN,
            "leadingDocumentPages": BOOLEAN,
            "xPosition": INTEGER,
            "yPosition": INTEGER,
        },
        required=frozenset({"enableNumbering", "leadingDocumentPages", "xPosition", "yPosition"}),
    ),
    "CustomEventRef": Schema(
        fields={"type": STRING, "schedule": Obj("EventScheduleRef")}, required=frozenset({"type"})
    ),
    "EventScheduleRef": Schema(
        fields={
            "anchor": OneOf(("policyStart", "policyEnd", "termStart", "segmentStart")),
            "alignment": EVENT_ALIGNMENT,
            "cadence": Obj("EventCadenceRef"),
            "offset": MapOf(INTEGER),
            "suppressOnStatuses": ListOf(
                OneOf(("pending", "expired", "cancelled", "cancelPending", "onRisk", "delinquent", "doNotRenew"))
            ),
        },
        required=frozenset({"anchor"}),
    ),
    "EventCadenceRef": Schema(
        fields={"durationBasis": DURATION_BASIS, "intervalDuration": INTEGER, "limit": INTEGER},
        required=frozenset({"durationBasis", "intervalDuration"}),
    ),
    "TenantCustomEventRef": Schema(
        fields={"isPersisted": BOOLEAN, "type": STRING, "schedule": Obj("TenantEventScheduleRef")},
        required=frozenset({"isPersisted", "type"}),
    ),
    "TenantEventScheduleRef": Schema(
        fields={"alignment": EVENT_ALIGNMENT, "cadence": Obj("EventCadenceRef"), "offset": MapOf(INTEGER)}
    ),
    "SecretRef": Schema(fields={"items": MapOf(Obj("PrimitivePropertyRef"))}, required=frozenset({"items"})),
    "PrimitivePropertyRef": Schema(fields={"dataType": BUILTIN_TYPE}, required=frozenset({"dataType"})),
    "AuxDataSettingsRef": Schema(
        fields={"expirationPeriod": INTEGER, "displayName": STRING}, required=frozenset({"expirationPeriod"})
    ),
    "DataAccessControlRef": Schema(
        fields={
            "account": Obj("DataAccessControlFieldRef"),
            "policy": Obj("DataAccessControlFieldRef"),
            "dataMasking": BOOLEAN,
            "enabled": BOOLEAN,
        },
        required=frozenset({"account", "policy", "dataMasking", "enabled"}),
    ),
    "DataAccessControlFieldRef": Schema(fields={"fields": ListOf(STRING)}, required=frozenset({"fields"})),
    "AutomationPluginRef": Schema(
        fields={
            "enableWebhooks": BOOLEAN,
            "secret": STRING,
            "webhookHandlerTimeout": INTEGER,
            "actions": MapOf(Obj("AutomationPluginActionRef")),
        }
    ),
    "AutomationPluginActionRef": Schema(fields={"timeout": INTEGER, "request": PROPERTIES, "response": PROPERTIES}),
    "MoratoriumRef": Schema(fields={}),
    "TransactionTypeRef": Schema(
        fields={
            "category": TRANSACTION_CATEGORY,
            "costBearing": BOOLEAN,
            "displayHints": Obj("DisplayHintsRef"),
            "data": PROPERTIES,
        },
        required=frozenset({"category"}),
        defaults={"costBearing": True},
    ),
    "WorkManagementRef": Schema(
        # activities and assignmentRoles are the older names of tasks and userAssociationRoles,
        # still in real packages and echoed by the server.
        fields={
            "qualifications": MapOf(ListOf(STRING)),
            "tasks": MapOf(MapOf(Obj("TaskTypeRef"))),
            "activities": MapOf(MapOf(Obj("TaskTypeRef"))),
            "userAssociationRoles": MapOf(Obj("UserAssociationRoleRef")),
            "assignmentRoles": MapOf(Obj("UserAssociationRoleRef")),
        }
    ),
    "TaskTypeRef": Schema(
        fields={
            "blocksUnderwriting": BOOLEAN,
            "defaultDeadlineDays": NUMBER,
            "numberingPlan": NUMBERING_PLAN,
            "numberingString": STRING,
        },
        required=frozenset({"blocksUnderwriting", "defaultDeadlineDays"}),
    ),
    "UserAssociationRoleRef": Schema(
        fields={
            "exclusive": BOOLEAN,
            "appliesTo": ListOf(
                OneOf(
                    (
                        "account",
                        "quickQuote",
                        "quote",
                        "policy",
                        "transaction",
                        "invoice",
                        "underwritingFlag",
                        "payment",
                        "quoteGroup",
                        "inquiry",
                    )
                )
            ),
            "qualification": MapOf(STRING),
        }
    ),
    "ProducerManagementRef": Schema(
        fields={
            "underwritingFlag": Obj("UnderwritingFlagRef"),
            "producers": _collection("ProducerRef"),
            "producerCodes": _collection("ProducerCodeRef"),
            "producerLicenses": _collection("ProducerLicenseRef"),
            "producerAppointments": _collection("ProducerAppointmentRef"),
        },
        required=frozenset(
            {"underwritingFlag", "producers", "producerCodes", "producerLicenses", "producerAppointments"}
        ),
    ),
    "UnderwritingFlagRef": Schema(
        fields={
            "level": OneOf(("info", "block", "decline", "reject", "approve")),
            "note": STRING,
            "tag": STRING,
        }
    ),
    "ProducerRef": Schema(fields={**_ENTITY_BASE, "data": PROPERTIES}, answered=_PRODUCER_ANSWERED),
    "ProducerCodeRef": Schema(
        fields={**_ENTITY_BASE, "data": PROPERTIES, "numberingPlan": NUMBERING_PLAN, "numberingString": STRING},
        answered={**_PRODUCER_ANSWERED, "numberingPlan": "", "numberingString": ""},
    ),
    "ProducerLicenseRef": Schema(fields={**_ENTITY_BASE, "data": PROPERTIES}, answered=_PRODUCER_ANSWERED),
    "ProducerAppointmentRef": Schema(fields={**_ENTITY_BASE, "data": PROPERTIES}, answered=_PRODUCER_ANSWERED),
    "BootstrapRef": Schema(fields={"resources": Obj("ResourcesRef")}, required=frozenset({"resources"})),
    "ResourcesRef": Schema(
        fields={
            "resourceInstances": MapOf(Obj("ResourceInstanceRef")),
            "resourceGroups": MapOf(Obj("ResourceGroupRef")),
        },
        required=frozenset({"resourceInstances", "resourceGroups"}),
    ),
    "ResourceInstanceRef": Schema(
        fields={
            "staticName": Ref(
                ("tables", "rangeTables", "constraintTables", "documents", "templateSnippets", "secrets")
            ),
            "jurisdictions": ListOf(STRING),
        },
        required=frozenset({"staticName"}),
        defaults={"jurisdictions": []},
    ),
    "ResourceGroupRef": Schema(
        fields={
            "selectionStartTime": DATETIME,
            "resourceNames": ListOf(Ref(("bootstrap.resources.resourceInstances",))),
        },
        required=frozenset({"selectionStartTime", "resourceNames"}),
    ),
}

ROOT = Obj("ConfigurationRef")

COLLECTIONS: tuple[str, ...] = tuple(
    name for name, kind in SCHEMAS["ConfigurationRef"].fields.items() if isinstance(kind, MapOf)
)
"""The named collections of a ConfigurationRef (one folder per entity in a package)."""


def lookup(root: dict[str, Any], dotted_path: str) -> Any:
    """The value at a dotted path from the root, or None."""
    node: Any = root
    for key in dotted_path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def extendable_collections(root: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(dotted path, map) of every named collection whose entities may `extend` one another."""
    yield from _extendable_in(root, SCHEMAS["ConfigurationRef"], "")


def _extendable_in(obj: dict[str, Any], schema: Schema, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for key, kind in schema.fields.items():
        value = obj.get(key)
        if not isinstance(value, dict):
            continue
        key_path = f"{path}.{key}" if path else key
        match kind:
            case MapOf(value=Obj(schema=entity_schema)) if "extend" in SCHEMAS[entity_schema].fields:
                yield key_path, value
            case Obj(schema=nested_schema):
                yield from _extendable_in(value, SCHEMAS[nested_schema], key_path)

"""Enqueueing document generation from the domains below documents (quotes, transactions), in the unit
of work that moves a record into a trigger state: each trigger reached at which the record's product
has a configured document gets one `documents.generate` job (DECISIONS.md "Documents"). The job, in
chalicelib/documents, records the documents job and its instances and renders them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chalicelib.core.ids import new_locator
from chalicelib.runtime import jobs
from chalicelib.runtime.job_types import JobType
from chalicelib.storage.unit_of_work import UnitOfWork

STEP_TRIGGERS = {
    "validate": "validated",
    "price": "priced",
    "underwrite": "underwritten",
    "accept": "accepted",
    "issue": "issued",
}
"""The lifecycle step that reaches each trigger state."""


def triggers_configured(model: Mapping[str, Any], product: str) -> set[str]:
    """The trigger states of the product's documents (invoice documents are billing's)."""
    names = ((model.get("products") or {}).get(product) or {}).get("documents") or []
    configs = [(model.get("documents") or {}).get(name) for name in names if isinstance(name, str)]
    return {
        str(config.get("trigger", "issued"))
        for config in configs
        if isinstance(config, dict) and config.get("scope") != "invoice"
    }


def enqueue_generation(
    uow: UnitOfWork,
    model: Mapping[str, Any],
    product: str,
    reference_type: str,
    reference_locator: str,
    steps_done: Iterable[str],
) -> list[str]:
    """One documents job per trigger state the steps reached that has documents; answers their locators."""
    configured = triggers_configured(model, product)
    locators = []
    for step in steps_done:
        trigger = STEP_TRIGGERS.get(step)
        if trigger in configured:
            locator = new_locator()
            jobs.enqueue(
                uow,
                JobType.DOCUMENTS_GENERATE,
                {
                    "jobLocator": locator,
                    "referenceType": reference_type,
                    "referenceLocator": reference_locator,
                    "trigger": trigger,
                },
                locator=locator,
            )
            locators.append(locator)
    return locators

"""Asynchronous work of the billing domain, registered as its packages' job_handlers modules are imported:
billing an issued transaction, early invoicing and the generation of an account's invoices
(invoices/job_handlers.py), an invoice's autopay (payments/job_handlers.py), what an excess credit plan does
with an account's credit (credit/job_handlers.py) and delinquency's due work (delinquency/due_work.py)."""
from __future__ import annotations

from chalicelib.billing.credit import job_handlers as credit  # noqa: F401 (registers its handlers)
from chalicelib.billing.delinquency import due_work as delinquency  # noqa: F401 (registers its handlers)
from chalicelib.billing.invoices import job_handlers as invoices  # noqa: F401 (registers its handlers)
from chalicelib.billing.payments import job_handlers as payments  # noqa: F401 (registers its handlers)

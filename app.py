"""The Chalice application: middleware, blueprints and the wiring of ports between domains, no logic."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from chalice import Chalice

from chalicelib.accounts.routes import bp as account_routes
from chalicelib.apidocs.routes import bp as api_description
from chalicelib.billing.credit.routes import bp as credit_routes
from chalicelib.billing.delinquency.routes import bp as delinquency_routes
from chalicelib.billing.holds.routes import bp as hold_routes
from chalicelib.billing.installments.routes import bp as installment_routes
from chalicelib.billing.invoices.routes import bp as invoice_routes
from chalicelib.billing.payments.routes import bp as payment_routes
from chalicelib.billing.writeoffs.routes import bp as write_off_routes
from chalicelib.clock.routes import bp as clock_routes
from chalicelib.compliance.routes import bp as compliance_routes
from chalicelib.configuration.routes import bp as configuration_routes
from chalicelib.core.context import CallContext
from chalicelib.documents.routes import BINARY_TYPES as DOCUMENT_BINARY_TYPES
from chalicelib.documents.routes import bp as document_routes
from chalicelib.entity_holds.routes import bp as entity_hold_routes
from chalicelib.events.routes import bp as event_routes
from chalicelib.http import auth
from chalicelib.http import uploads as uploaded_files
from chalicelib.http.middleware import framework_answers_in_our_shape, observe_requests
from chalicelib.http.request import capture_request
from chalicelib.identity.routes import bp as identity_routes
from chalicelib.migration.routes import bp as migration_routes
from chalicelib.policies.routes import bp as policy_routes
from chalicelib.quickquotes.routes import bp as quick_quote_routes
from chalicelib.quotes.routes import bp as quote_routes
from chalicelib.runtime import rendering_sources, wiring
from chalicelib.schedules.routes import bp as schedule_routes
from chalicelib.tables.routes import bp as table_routes
from chalicelib.transactions.routes import bp as transaction_routes
from chalicelib.uploads.routes import bp as upload_routes
from chalicelib.workers.queue import bp as job_worker
from chalicelib.workers.schedules import bp as schedules


def _invoice_rendering_data(ctx: CallContext, locator: str) -> dict[str, Any]:
    """Billing's, for the documents domain below it (runtime/rendering_sources.py); billing loads on the
    first invoice rendered, not at a cold start."""
    from chalicelib.billing.invoices import service as invoices

    return invoices.invoice_rendering_data(ctx, locator)


rendering_sources.wire("invoice", _invoice_rendering_data)


@contextmanager
def _referenced_file(ctx: CallContext, purpose: str, locator: str) -> Iterator[bytes]:
    """The uploads domain's, for the edge below it (http/uploads.py): the file a route takes by `?uploadLocator=`;
    uploads load on the first request that names one."""
    from chalicelib.uploads import service as uploads

    with uploads.referenced_file(ctx, purpose, locator) as content:
        yield content


uploaded_files.wire(_referenced_file)


def _authenticator() -> auth.Authenticator:
    """The identity domain's, for the edge below it (http/auth.py): identity's service loads on the first
    authenticated request, not at a cold start."""
    from chalicelib.identity import service as identity

    return identity


auth.wire(_authenticator)


def _tenant_clocks() -> wiring.TenantClocks:
    """The clock domain's, for the runtime below it (runtime/wiring.py): a tenant's business time; the clock
    domain loads on the first request or job, not at a cold start."""
    from chalicelib.clock import service as clocks

    return clocks


wiring.wire_tenant_clocks(_tenant_clocks)

# Chalice's logger is named after the app, as the Powertools Logger is after the service: one logger, "pas",
# which Powertools configures (runtime/observability.py). Chalice's own would print each line a second time
# and drop everything below ERROR.
app = Chalice(app_name="pas", configure_logs=False)
app.api.binary_types.extend(["application/zip", "application/octet-stream", "multipart/form-data"])
app.register_middleware(observe_requests, "http")  # outermost: the request's id, trace and metrics
app.register_middleware(capture_request, "http")
app.register_middleware(framework_answers_in_our_shape(app.routes), "http")

app.register_blueprint(api_description)
app.register_blueprint(identity_routes)
app.register_blueprint(configuration_routes)
app.register_blueprint(event_routes)
app.register_blueprint(table_routes)
app.register_blueprint(account_routes)
app.register_blueprint(policy_routes)
app.register_blueprint(quote_routes)
app.register_blueprint(quick_quote_routes)
app.register_blueprint(transaction_routes)
app.register_blueprint(installment_routes)
app.register_blueprint(invoice_routes)
app.register_blueprint(payment_routes)
app.register_blueprint(clock_routes)
app.register_blueprint(job_worker)
app.register_blueprint(schedules)
app.register_blueprint(schedule_routes)
app.register_blueprint(document_routes)
app.api.binary_types.extend(DOCUMENT_BINARY_TYPES)
app.register_blueprint(delinquency_routes)
app.register_blueprint(hold_routes)
app.register_blueprint(entity_hold_routes)
app.register_blueprint(write_off_routes)
app.register_blueprint(credit_routes)
app.register_blueprint(upload_routes)
app.register_blueprint(compliance_routes)
app.register_blueprint(migration_routes)

"""Every background job's name, in one place: enqueuers and handlers both name a job by its JobType.

A lower domain that must cause work in a higher one enqueues the higher one's job by its name here,
so it never imports the domain that handles it. The value is the name on the wire (`JobMessage.job_type`
and the job item's `jobType`): renaming one strands the messages and job items already written.
"""

from __future__ import annotations

from enum import StrEnum


class JobType(StrEnum):
    REAP_JOBS = "jobs.reap"
    TABLES_BOOTSTRAP = "tables.bootstrap"
    TABLES_CLEANUP = "tables.cleanup"
    SCHEDULE_FAN_OUT = "schedules.fanOut"
    BILLING_INSTALLMENTS = "billing.installments"
    BILLING_EARLY_INVOICING = "billing.earlyInvoicing"
    DUE_RUN = "due.run"
    CLOCK_ADVANCE = "clock.advance"
    SCHEDULE_ITEMS_DESERIALIZE = "scheduleItems.deserialize"
    DOCUMENTS_GENERATE = "documents.generate"
    BILLING_EXCESS_CREDIT = "billing.excessCredit"
    SCHEDULE_ITEMS_CLEANUP = "scheduleItems.cleanup"
    SCHEDULE_ITEMS_DROP_RUN = "scheduleItems.dropRun"
    TENANT_CODE_PUBLISH = "tenantCode.publish"
    COMPLIANCE_ANONYMIZE = "compliance.anonymize"
    COMPLIANCE_CONTACT_INDEX_BACKFILL = "compliance.contactIndexBackfill"
    MIGRATION_RUN = "migration.run"
    MIGRATION_ACCOUNT = "migration.account"

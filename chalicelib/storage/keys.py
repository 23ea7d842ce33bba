"""Every key template of the single table, in one place.

Tenant records start with ``T#{tenantLocator}#``; system records (users, roles, tokens, the tenant
registry) start with ``SYS#``. The gateway refuses any key outside the caller's scope.
"""

from __future__ import annotations

from dataclasses import dataclass

ROOT = "#ROOT"
SYSTEM_SCOPE = "SYS#"


def tenant_scope(tenant_locator: str) -> str:
    if not tenant_locator:
        raise ValueError("a tenant key needs a tenant locator")
    return f"T#{tenant_locator}#"


@dataclass(frozen=True)
class Key:
    pk: str
    sk: str = ROOT

    def as_dict(self) -> dict[str, str]:
        return {"PK": self.pk, "SK": self.sk}


# --- system: identity and the tenant registry ---------------------------------------------------


def user(user_locator: str) -> Key:
    return Key(f"SYS#USER#{user_locator}")


def user_token_name(user_locator: str, name: str) -> Key:
    return Key(f"SYS#USER#{user_locator}", f"TOKEN#{name}")


def user_tokens_prefix() -> str:
    return "TOKEN#"


def user_name(name: str) -> Key:
    return Key(f"SYS#USERNAME#{name.lower()}")


USERS_INDEX = "SYS#USERS"


def role(role_locator: str) -> Key:
    return Key(f"SYS#ROLE#{role_locator}")


def role_holders(role_locator: str) -> Key:
    """The tenants of the users who hold the role, counted, with a version every change of them bumps."""
    return Key(f"SYS#ROLE#{role_locator}", "#HOLDERS")


def role_name(name: str) -> Key:
    return Key(f"SYS#ROLENAME#{name.lower()}")


ROLES_INDEX = "SYS#ROLES"


def token(token_hash: str) -> Key:
    return Key(f"SYS#TOKEN#{token_hash}")


def tenant(tenant_locator: str) -> Key:
    return Key(f"SYS#TENANT#{tenant_locator}")


TENANTS_INDEX = "SYS#TENANTS"

# --- events (scope is a tenant scope, or the system scope for identity events) --------------------


def event(scope: str, event_locator: str) -> Key:
    return Key(f"{scope}EVT#{event_locator}")


def events_stream(scope: str) -> str:
    return f"{scope}EVENTS"


def events_by_type(scope: str, event_type: str) -> str:
    return f"{scope}EVTTYPE#{event_type}"


def events_by_request(scope: str, request_id: str) -> str:
    return f"{scope}REQ#{request_id}"


# --- idempotency guards ------------------------------------------------------------------------


def idempotency_guard(scope: str, user_locator: str, operation: str, key: str) -> Key:
    return Key(f"{scope}IDEMP#{user_locator}#{operation}#{key}")


# --- jobs --------------------------------------------------------------------------------------


def job(tenant_locator: str, job_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}JOB#{job_locator}")


def jobs_index(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}JOBS"


def job_leases_index(tenant_locator: str) -> str:
    """Sparse: only queued and running jobs carry it, sorted by the time their lease runs out."""
    return f"{tenant_scope(tenant_locator)}JOBLEASES"


def bootstrap_marker() -> Key:
    return Key("SYS#BOOTSTRAP")


# --- the tenant's clock and its due work ---------------------------------------------------------
# A test-clock tenant has one clock item (clock/repository.py); an ordinary tenant has none.
# A due entry (storage/due_index.py) is one item, keyed by its kind and the record it is about, so it is
# put, moved and removed by that name alone; while it exists it sits on GSI3 under `due_index(t)`,
# sorted by `{dueAt}#{kind}#{ref}`: a tenant's entries up to a moment, in time order, are one Query.


def tenant_clock(tenant_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}CLOCK")


def due_entry(tenant_locator: str, kind: str, ref: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}DUE#{kind}#{ref}")


def due_index(tenant_locator: str) -> str:
    """GSI3: the tenant's due entries, sorted by `due_sort_key`."""
    return f"{tenant_scope(tenant_locator)}DUE"


def due_sort_key(due_at: str, kind: str, ref: str) -> str:
    """`due_at`: the entry's due time as `core.clock.isoformat` writes it (fixed width: sorts as it reads)."""
    return f"{due_at}#{kind}#{ref}"


# --- configuration deployments -------------------------------------------------------------------
# One partition per tenant: the immutable version items, the pointer to the current version (with its
# DeploymentMetadata), one item per static version locator naming its latest version, and the record
# of the bootstrap resources that createTenant stored for the tables capability to load.


def config_partition(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}CFG"


def config_current(tenant_locator: str) -> Key:
    return Key(config_partition(tenant_locator), "#CURRENT")


def config_version(tenant_locator: str, version: str) -> Key:
    return Key(config_partition(tenant_locator), f"V#{version}")


def config_static_version(tenant_locator: str, static_version_locator: str) -> Key:
    return Key(config_partition(tenant_locator), f"S#{static_version_locator}")


def config_bootstrap(tenant_locator: str) -> Key:
    return Key(config_partition(tenant_locator), "#BOOTSTRAP")


# --- tables (lookup, range, constraint) ----------------------------------------------------------
# One partition per tenant holds the small records: each table instance (its versions), the selection
# index of each static name (every version of every instance implementing it, for choosing the one in
# force) and the status of each bootstrap resource. The rows of a lookup or range table version live
# in partitions of their own, `shards` of them per version, one item per key.


def tables_partition(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}TABLES"


def table_instance(tenant_locator: str, kind: str, name: str) -> Key:
    return Key(tables_partition(tenant_locator), f"I#{kind}#{name}")


def table_selection(tenant_locator: str, kind: str, static_name: str) -> Key:
    return Key(tables_partition(tenant_locator), f"S#{kind}#{static_name}")


TABLE_BOOTSTRAP_PREFIX = "B#"


def table_bootstrap_resource(tenant_locator: str, instance: str) -> Key:
    return Key(tables_partition(tenant_locator), f"{TABLE_BOOTSTRAP_PREFIX}{instance}")


def table_row(tenant_locator: str, version: str, shard: int, joined_key: str) -> Key:
    """A row of a lookup table version (or chunk 0 of a range table key); `joined_key` from
    tables/parser.join_key, so no two keys share an item."""
    return Key(f"{tenant_scope(tenant_locator)}TBLV#{version}#{shard}", f"K#{joined_key}")


def table_range_chunk(tenant_locator: str, version: str, shard: int, joined_key: str, chunk: int) -> Key:
    """Chunk 1, 2, ... of the ranges of one key of a range table version (chunk 0 is its table_row)."""
    return Key(f"{tenant_scope(tenant_locator)}TBLV#{version}#{shard}", f"C#{chunk}#{joined_key}")


# --- numbering ------------------------------------------------------------------------------------
# A counter per (tenant, numbering plan, entity kind) and one guard item per number in use, so a
# number is unique per tenant and entity kind (its owner's locator is on the guard).


def number_counter(tenant_locator: str, plan_name: str, entity_kind: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}NUMSEQ#{entity_kind}#{plan_name}")


def number_guard(tenant_locator: str, entity_kind: str, number: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}NUMBER#{entity_kind}#{number}")


# --- accounts -------------------------------------------------------------------------------------
# The account is one item; GSI2 lists the tenant's accounts in creation order. Quotes and policies
# of an account are listed on GSI1 by the partitions below (their own items carry them).


def account(tenant_locator: str, account_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}ACC#{account_locator}")


def accounts_index(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}ACCOUNTS"


def account_quotes_index(tenant_locator: str, account_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}ACC#{account_locator}#QTES"


def account_policies_index(tenant_locator: str, account_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}ACC#{account_locator}#POLS"


# --- policies -------------------------------------------------------------------------------------
# A policy is one item collection: the root (`#ROOT`; GSI1: the account's policies, GSI2: the tenant's
# policies, both in creation order), then its segments (each with its element tree as a document), static
# data history, terms by number and transactions. A transaction request reads its head by key (the root,
# the `TERM#` prefix, the segment and transactions the root names: policies.repository.head), work that
# needs the history the whole collection (one strongly consistent Query per MB). Every issue rewrites the
# root on condition of its version in the same transaction as its children, so a root read first is
# never older than the children read after it.
# Transactions and segments are found by locator on GSI1 (`transaction_lookup`, `segment_lookup`), a
# term through an alias item naming its policy and number; an issued transaction is also on the
# policy's sparse issued stack (GSI2, by issued time), which pages the issued transactions list.


def policy_partition(tenant_locator: str, policy_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}POL#{policy_locator}"


def policy(tenant_locator: str, policy_locator: str) -> Key:
    return Key(policy_partition(tenant_locator, policy_locator))


def policies_index(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}POLICIES"


SEGMENT_PREFIX = "SEG#"
STATIC_HISTORY_PREFIX = "STATIC#"
TERM_PREFIX = "TERM#"
TRANSACTION_PREFIX = "TX#"


def policy_term(tenant_locator: str, policy_locator: str, number: int) -> Key:
    return Key(policy_partition(tenant_locator, policy_locator), f"{TERM_PREFIX}{number:04d}")


def term_alias(tenant_locator: str, term_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}TERM#{term_locator}")


def policy_static_version(tenant_locator: str, policy_locator: str, history_locator: str) -> Key:
    return Key(policy_partition(tenant_locator, policy_locator), f"{STATIC_HISTORY_PREFIX}{history_locator}")


def policy_transaction(tenant_locator: str, policy_locator: str, transaction_locator: str) -> Key:
    return Key(policy_partition(tenant_locator, policy_locator), f"{TRANSACTION_PREFIX}{transaction_locator}")


def transaction_lookup(tenant_locator: str, transaction_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}TXN#{transaction_locator}"


def policy_issued_index(tenant_locator: str, policy_locator: str) -> str:
    return f"{policy_partition(tenant_locator, policy_locator)}#ISSUED"


def policy_segment(tenant_locator: str, policy_locator: str, segment_locator: str) -> Key:
    return Key(policy_partition(tenant_locator, policy_locator), f"{SEGMENT_PREFIX}{segment_locator}")


def segment_lookup(tenant_locator: str, segment_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}SEG#{segment_locator}"


# --- quotes ---------------------------------------------------------------------------------------
# A quote is one item (element tree, charges and underwriting flags inside it) at the root of its
# collection, which also holds its static data history. The tenant's quotes are listed on GSI2, an
# account's quotes on GSI1 (`account_quotes_index`). A quick quote is one item, listed on GSI2.


def quote(tenant_locator: str, quote_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}QTE#{quote_locator}")


QUOTE_STATIC_HISTORY_PREFIX = "STATIC#"


def quote_static_history(tenant_locator: str, quote_locator: str, history_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}QTE#{quote_locator}", f"{QUOTE_STATIC_HISTORY_PREFIX}{history_locator}")


def quotes_index(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}QUOTES"


def quick_quote(tenant_locator: str, quick_quote_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}QQTE#{quick_quote_locator}")


def quick_quotes_index(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}QQUOTES"


# --- identity hardening: sign-in throttling, named-token counter, role version --------------------


def sign_in_failures(subject_kind: str, subject_digest: str, window: int) -> Key:
    """Failed sign-ins of one user name or source address (`subject_digest`, a hash) in one time window."""
    return Key(f"SYS#SIGNINFAIL#{subject_kind}#{subject_digest}", f"W#{window}")


def user_named_token_count(user_locator: str) -> Key:
    """How many named tokens the user holds: the guard of the per-user limit."""
    return Key(f"SYS#USER#{user_locator}", "#TOKENCOUNT")


def roles_version(shard: int) -> Key:
    """One copy of the version every role change bumps (copies spread the reads of authentication)."""
    return Key(f"SYS#ROLESVERSION#{shard}")


# --- tables: version entries beyond the inline ones, and rows awaiting deletion ------------------


def table_selection_entry(tenant_locator: str, kind: str, static_name: str, sequence: int) -> Key:
    """The `sequence`-th version of a static name (its selection record lists them inline while few)."""
    return Key(tables_partition(tenant_locator), f"{table_selection_entry_prefix(kind, static_name)}{sequence:010d}")


def table_selection_entry_prefix(kind: str, static_name: str) -> str:
    return f"SV#{kind}#{static_name}#"


def table_instance_entry(tenant_locator: str, kind: str, name: str, sequence: int) -> Key:
    """The `sequence`-th version of an instance (its instance record lists them inline while few)."""
    return Key(tables_partition(tenant_locator), f"{table_instance_entry_prefix(kind, name)}{sequence:010d}")


def table_instance_entry_prefix(kind: str, name: str) -> str:
    return f"IV#{kind}#{name}#"


TABLE_SELECTION_PREFIX = "S#"
TABLE_GARBAGE_PREFIX = "G#"


def table_garbage(tenant_locator: str, version: str) -> Key:
    """A table version whose rows the cleanup job deletes: an upload not (yet) committed, or a retired version."""
    return Key(tables_partition(tenant_locator), f"{TABLE_GARBAGE_PREFIX}{version}")


def table_rows_partition(tenant_locator: str, version: str, shard: int) -> str:
    return f"{tenant_scope(tenant_locator)}TBLV#{version}#{shard}"


TABLE_PENDING_UPLOAD_PREFIX = "P#"


def table_pending_upload(tenant_locator: str, version: str) -> Key:
    """A table version whose rows are being written; its final transaction deletes this record."""
    return Key(tables_partition(tenant_locator), f"{TABLE_PENDING_UPLOAD_PREFIX}{version}")


# --- billing ----------------------------------------------------------------------------------------
# Every billing record of an account lives in the account's billing partition, whose root item is the
# billing root every billing write bumps. Uninvoiced installments and open invoices are found there
# through marker items sorted by time (`UNINV#{generateTime}#...`, `OPEN#{dueTime}#...`); a record by
# locator through an alias item naming its account, except an installment, which is stored at its alias
# key (one item, naming its account). Lists per policy, transaction and quote page a reference partition
# of their own (`billing_refs`), whose items name the record and its account; a lattice's references also
# name its installments, which is how installments are listed.

BILLING_LATTICE_PREFIX = "LAT#"
BILLING_INSTALLMENT_PREFIX = "INST#"
BILLING_INVOICE_PREFIX = "INV#"
BILLING_PAYMENT_PREFIX = "PAY#"
BILLING_UNINVOICED_PREFIX = "UNINV#"
BILLING_OPEN_PREFIX = "OPEN#"
BILLING_LEDGER_PREFIX = "LEDGER#"
BILLING_INVOICING_JOB_PREFIX = "IVJOB#"
BILLING_GENERATION_JOB_PREFIX = "IGJOB#"
BILLING_ITEM_PAGE_PREFIX = "IPG#"
"""An invoice's items beyond those its record holds: pages of one set (`IPG#{invoice}#{set}#{n}`), the set its
record names; a rewrite of its items writes a new set (invisible until the record names it) and deletes the old."""


def billing_partition(tenant_locator: str, account_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}BILL#{account_locator}"


def billing_root(tenant_locator: str, account_locator: str) -> Key:
    return Key(billing_partition(tenant_locator, account_locator))


def billing_record(tenant_locator: str, account_locator: str, prefix: str, locator: str) -> Key:
    return Key(billing_partition(tenant_locator, account_locator), f"{prefix}{locator}")


def billing_alias(tenant_locator: str, locator: str) -> Key:
    """Names the account whose billing partition holds the lattice, installment, invoice or payment."""
    return Key(f"{tenant_scope(tenant_locator)}BILLREF#{locator}")


def billing_item_pages(tenant_locator: str, account_locator: str, invoice: str, page_set: str) -> Key:
    """The sort-key prefix of an invoice's item pages of one set (a Query of it reads them in order)."""
    return Key(billing_partition(tenant_locator, account_locator), f"{BILLING_ITEM_PAGE_PREFIX}{invoice}#{page_set}#")


def billing_item_page(tenant_locator: str, account_locator: str, invoice: str, page_set: str, number: int) -> Key:
    prefix = billing_item_pages(tenant_locator, account_locator, invoice, page_set)
    return Key(prefix.pk, f"{prefix.sk}{number:05d}")


def billing_uninvoiced(tenant_locator: str, account_locator: str, generate_time: str, installment: str) -> Key:
    return Key(
        billing_partition(tenant_locator, account_locator), f"{BILLING_UNINVOICED_PREFIX}{generate_time}#{installment}"
    )


def billing_open_invoice(tenant_locator: str, account_locator: str, due_time: str, invoice: str) -> Key:
    return Key(billing_partition(tenant_locator, account_locator), f"{BILLING_OPEN_PREFIX}{due_time}#{invoice}")


def billing_application(tenant_locator: str, account_locator: str, invoice: str, application: str) -> Key:
    return Key(billing_partition(tenant_locator, account_locator), f"APP#{invoice}#{application}")


BILLING_APPLICATION_PAGE_PREFIX = "APG#"
"""An application's item amounts when it has more than its record holds (invoices/repository.py
APPLICATION_INLINE_AMOUNTS): pages `APG#{invoice}#{application}#{n}`, written once with the application (they never
change: a reversal rewrites the record alone), unread until the record names their count."""


def billing_application_pages(tenant_locator: str, account_locator: str, invoice: str, application: str) -> Key:
    """The sort-key prefix of an application's pages of item amounts (a Query of it reads them in order)."""
    return Key(
        billing_partition(tenant_locator, account_locator), f"{BILLING_APPLICATION_PAGE_PREFIX}{invoice}#{application}#"
    )


def billing_application_page(
    tenant_locator: str, account_locator: str, invoice: str, application: str, number: int
) -> Key:
    prefix = billing_application_pages(tenant_locator, account_locator, invoice, application)
    return Key(prefix.pk, f"{prefix.sk}{number:05d}")


def billing_staged_commit(tenant_locator: str, account_locator: str, token: str) -> Key:
    """Written by the final write of a billing change staged over several writes (billing/staging.py):
    what that change staged is visible once this exists."""
    return Key(billing_partition(tenant_locator, account_locator), f"STAGED#{token}")


def billing_credit_balance(tenant_locator: str, account_locator: str, currency: str) -> Key:
    return Key(billing_partition(tenant_locator, account_locator), f"CREDIT#{currency}")


def billing_ledger_line(tenant_locator: str, account_locator: str, currency: str, line: str) -> Key:
    return Key(billing_partition(tenant_locator, account_locator), f"{BILLING_LEDGER_PREFIX}{currency}#{line}")


def billing_refs(tenant_locator: str, owner_kind: str, owner_locator: str, record_kind: str) -> str:
    """The partition listing the billing records of one kind (`INST`, `LAT`, `INV`, `NZINV` for invoices
    of a nonzero amount) of a policy, transaction or quote, in creation order."""
    return f"{tenant_scope(tenant_locator)}BILLOF#{owner_kind}#{owner_locator}#{record_kind}"


def billing_ref(tenant_locator: str, owner_kind: str, owner_locator: str, record_kind: str, locator: str) -> Key:
    return Key(billing_refs(tenant_locator, owner_kind, owner_locator, record_kind), locator)


def tenant_payments_index(tenant_locator: str) -> str:
    """GSI2: the tenant's payments (the payment items themselves), by locator: creation order."""
    return f"{tenant_scope(tenant_locator)}PAYMENTS"


def tenant_credits_index(tenant_locator: str) -> str:
    """GSI2: the tenant's credits (the account's reference of each posted payment), by payment locator."""
    return f"{tenant_scope(tenant_locator)}CREDITS"


# --- schedules ------------------------------------------------------------------------------------
# One partition per schedule (a quote's or transaction's element that names a schedule): its root item
# (the writer lock of patches and deletes), one item per schedule item (`SI#{locator}`, so the items page
# by locator with one Query) holding the item's versions, and one commit record per write (`SC#{token}`):
# an item version is visible once the commit record of its write token exists. A deserialization job is
# one item, listed per job type on GSI2 and per job type and state on GSI1.

SCHEDULE_ITEM_PREFIX = "SI#"
SCHEDULE_COMMIT_PREFIX = "SC#"


def schedule_partition(tenant_locator: str, owner_kind: str, owner_locator: str, static_element_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}SCHED#{owner_kind}#{owner_locator}#{static_element_locator}"


def schedule_root(partition: str) -> Key:
    return Key(partition)


def schedule_item(partition: str, item_locator: str) -> Key:
    return Key(partition, f"{SCHEDULE_ITEM_PREFIX}{item_locator}")


def schedule_commit(partition: str, token: str) -> Key:
    return Key(partition, f"{SCHEDULE_COMMIT_PREFIX}{token}")


def deserialization_job(tenant_locator: str, job_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}DSJOB#{job_locator}")


def deserialization_jobs_index(tenant_locator: str, job_type: str) -> str:
    return f"{tenant_scope(tenant_locator)}DSJOBS#{job_type}"


def deserialization_jobs_by_state(tenant_locator: str, job_type: str, state: str) -> str:
    return f"{tenant_scope(tenant_locator)}DSJOBS#{job_type}#{state}"


def anonymization_job(tenant_locator: str, job_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}ANONJOB#{job_locator}")


def contact_holders(tenant_locator: str, contact_locator: str) -> str:
    """The partition naming the records (accounts, quotes, quick quotes, policies) that list the contact
    (storage/contact_index.py)."""
    return f"{tenant_scope(tenant_locator)}CONTACT#{contact_locator}"


def contact_holder(tenant_locator: str, contact_locator: str, holder_type: str, holder_locator: str) -> Key:
    return Key(contact_holders(tenant_locator, contact_locator), f"{holder_type}#{holder_locator}")


def anonymization_reference(tenant_locator: str, reference_type: str, reference_locator: str) -> Key:
    """Where a referenced record stands in anonymization: its job, and when it was anonymized."""
    return Key(f"{tenant_scope(tenant_locator)}ANONREF#{reference_type}#{reference_locator}")


# Billing II: write-offs, credit distributions and disbursements (records of the billing partition).
BILLING_WRITEOFF_PREFIX = "WOFF#"
BILLING_CREDIT_DISTRIBUTION_PREFIX = "CDIST#"
BILLING_DISBURSEMENT_PREFIX = "DISB#"
BILLING_WRITEOFF_PAGE_PREFIX = "WPG#"
"""A write-off's item amounts when it settled more items than its record holds (writeoffs/repository.py
INLINE_AMOUNTS: a fleet's invoice written off): pages `WPG#{write-off}#{n}`, written once with it (they never change:
what its reversals gave back follows from its `reversedAmount`), unread until the record names their count."""


def billing_writeoff_pages(tenant_locator: str, account_locator: str, write_off: str) -> Key:
    """The sort-key prefix of a write-off's pages of item amounts (a Query of it reads them in order)."""
    return Key(billing_partition(tenant_locator, account_locator), f"{BILLING_WRITEOFF_PAGE_PREFIX}{write_off}#")


def billing_writeoff_page(tenant_locator: str, account_locator: str, write_off: str, number: int) -> Key:
    prefix = billing_writeoff_pages(tenant_locator, account_locator, write_off)
    return Key(prefix.pk, f"{prefix.sk}{number:05d}")


BILLING_DELINQUENCY_PAGE_PREFIX = "DPG#"
"""A delinquency's references when it has more than its record holds (delinquency/repository.py INLINE_REFERENCES: a
fleet's, one a policy): pages of one set (`DPG#{delinquency}#{set}#{n}`), the set its record names
(`referencePages`); a write that changes them (a lapse naming its transactions, an invoice joining) writes a new set
(unseen until the record names it) and deletes the old one."""


def billing_delinquency_pages(tenant_locator: str, account_locator: str, delinquency: str, page_set: str) -> Key:
    """The sort-key prefix of a delinquency's reference pages of one set (a Query of it reads them in order)."""
    return Key(
        billing_partition(tenant_locator, account_locator),
        f"{BILLING_DELINQUENCY_PAGE_PREFIX}{delinquency}#{page_set}#",
    )


def billing_delinquency_page(
    tenant_locator: str, account_locator: str, delinquency: str, page_set: str, number: int
) -> Key:
    prefix = billing_delinquency_pages(tenant_locator, account_locator, delinquency, page_set)
    return Key(prefix.pk, f"{prefix.sk}{number:05d}")


def billing_container_root(tenant_locator: str, account_locator: str, container_locator: str) -> Key:
    """The billing root of a container other than the account (a policy billed at policy level), in its
    account's billing partition beside the account's own root (`billing_root`)."""
    return Key(billing_partition(tenant_locator, account_locator), f"{ROOT}#{container_locator}")


# --- uploads (bodies over the direct limit, DECISIONS.md "Uploads") --------------------------------
# An upload intent is one item: a tenant's under the tenant's scope, one made for no tenant (a package for
# createTenant or validateConfig) under the system scope of the user who made it, whom alone it serves. Its
# object lies under `uploads/` of the blob bucket, where the bucket's lifecycle rule removes it after a day.

UPLOADS_OBJECT_PREFIX = "uploads/"


def tenant_upload(tenant_locator: str, upload_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}UPLOAD#{upload_locator}")


def user_upload(user_locator: str, upload_locator: str) -> Key:
    return Key(f"SYS#USER#{user_locator}#UPLOAD#{upload_locator}")


def upload_object(tenant_locator: str | None, user_locator: str, upload_locator: str) -> str:
    """The S3 key of an upload's object: the tenant's, or (for no tenant) the user's."""
    if tenant_locator:
        return f"{UPLOADS_OBJECT_PREFIX}tenants/{tenant_locator}/{upload_locator}"
    if not user_locator:
        raise ValueError("an upload for no tenant needs its user")
    return f"{UPLOADS_OBJECT_PREFIX}users/{user_locator}/{upload_locator}"


# --- migration (spec part 3 "Migration", DECISIONS.md "Migration") ---------------------------------
# A migration is one item collection, partition `T#{t}#MIG#{m}`: `#ROOT` the migration with its counters,
# `ACC#{a}` each account's state (a: the account's locator, derived from the migration and its original id),
# `MAP#{a}` its id mappings once it is written, `FAIL#{a}` its failures while it has any. An account's invoices
# by their original ids, per migration that brought them (`T#{t}#MIGINV#{a}`, sort key the migration), let a
# later migration joining the account name them as its source book does.

MIGRATION_ACCOUNT_PREFIX = "ACC#"
MIGRATION_MAPPING_PREFIX = "MAP#"
MIGRATION_FAILURE_PREFIX = "FAIL#"


def migration_partition(tenant_locator: str, migration_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}MIG#{migration_locator}"


def migration(tenant_locator: str, migration_locator: str) -> Key:
    return Key(migration_partition(tenant_locator, migration_locator))


def migration_account(tenant_locator: str, migration_locator: str, account_locator: str) -> Key:
    return Key(migration_partition(tenant_locator, migration_locator), f"{MIGRATION_ACCOUNT_PREFIX}{account_locator}")


def migration_mapping(tenant_locator: str, migration_locator: str, account_locator: str) -> Key:
    return Key(migration_partition(tenant_locator, migration_locator), f"{MIGRATION_MAPPING_PREFIX}{account_locator}")


def migration_failure(tenant_locator: str, migration_locator: str, account_locator: str) -> Key:
    return Key(migration_partition(tenant_locator, migration_locator), f"{MIGRATION_FAILURE_PREFIX}{account_locator}")


def migrated_invoices_partition(tenant_locator: str, account_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}MIGINV#{account_locator}"


def migrated_invoices(tenant_locator: str, account_locator: str, migration_locator: str) -> Key:
    return Key(migrated_invoices_partition(tenant_locator, account_locator), migration_locator)

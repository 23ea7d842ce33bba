"""Lookup, range and constraint tables (spec part 1, "Tables"): uploads, downloads, lookups, the
constraint engine, and loading the tables that come with a tenant's configuration package.

An upload is checked whole before anything is stored: the table must be declared by the current
configuration, the CSV header must name its columns, every value must fit its column's dataType, keys
must be unique and ranges must not overlap. So a bad file changes nothing and the previous version
stays in force. Then the rows are written in bulk (unreachable so far), the CSV is kept for downloads,
and one transaction moves the instance and its static name's selection record to the new version and
records the event (`resource.<resourceType>.create` or `.replace`): the commit record.

Which version answers a lookup: versions.py. What a lookup costs: at most one DynamoDB read, none when
this process has read the row before (cache.py); the first lookup of a table in a process reads its
selection record too, and a range key with more ranges than fit in one item may take a second read.
"""

from __future__ import annotations

import io
import zipfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from chalicelib.configuration import service as configuration
from chalicelib.configuration.models import BootstrapFile, BootstrapRecord
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, DomainError, FieldError
from chalicelib.core.ids import new_locator
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.tables import cache, constraints, layout, parser, repository, versions
from chalicelib.tables.models import (
    DATA_TYPES,
    NUMERIC_TYPES,
    RESOURCE_NAME,
    BootstrapStatus,
    ParsedRow,
    Selection,
    SelectionTimes,
    TableInstance,
    TableKind,
    TableResource,
    TableSchema,
    VersionEntry,
)

VERSION_RETENTION = timedelta(days=400)
"""A version stays while it is in force at some moment of the last VERSION_RETENTION or later (for some
jurisdiction, or for its instance's own name): lookups dated within a policy term and a bit keep their
answers; dated earlier, they fall back on the earliest version kept (versions.py, rule 3)."""
GARBAGE_GRACE = timedelta(hours=1)
"""How long the rows of a retired version outlive it (processes may still hold the selection that named
it, cache.py) and how old an upload that never committed must be to count as lost (an upload runs
within the API's 30 s, a bootstrap step within the job worker's 300 s)."""
BOOTSTRAP_FAILED_EVENT = "resource.bootstrap.fail"
BOOTSTRAP_STEP_BYTES = 4_000_000
"""CSV bytes one bootstrap step loads at most (unless one file is larger): like an upload through the
API, which must fit the API's 30 s, so a step stays far below the job worker's timeout."""

_BOOTSTRAP_FOLDERS = {
    "tables": (TableKind.LOOKUP, TableKind.RANGE),
    "rangeTables": (TableKind.RANGE,),
    "constraintTables": (TableKind.CONSTRAINT,),
}

At = datetime | SelectionTimes | None
"""When a lookup looks: a moment (used as given), the moments the caller knows (the table's
selectionTimeBasis picks one), or None (now)."""


# --- uploads and downloads -----------------------------------------------------------------------


def create_table(
    ctx: CallContext, kind: TableKind, *, name: str, static_name: str, jurisdictions: Sequence[str], upload: bytes
) -> TableResource:
    """A new instance `name` of the table `static_name` from an uploaded ZIP holding one CSV; its
    version is in force from now (for any earlier moment too, when it is the first of its table)."""
    _, content = parser.read_zip(upload)
    _, model = configuration.current_model(ctx)
    return _store(ctx, kind, name, static_name, tuple(dict.fromkeys(jurisdictions)), content, ctx.now, model)


def replace_table(ctx: CallContext, kind: TableKind, name: str, upload: bytes) -> TableResource:
    """A new version of the instance `name`, in force from now; earlier moments keep the old one."""
    instance = repository.get_instance(ctx.tenant, kind, name)
    if instance is None:
        raise codes.not_found(kind.value, name)
    _, content = parser.read_zip(upload)
    _, model = configuration.current_model(ctx)
    return _store(
        ctx, kind, name, instance.staticName, instance.jurisdictions, content, ctx.now, model, replacing=instance
    )


def download_table(ctx: CallContext, kind: TableKind, name: str) -> tuple[str, bytes]:
    """(file name, ZIP) of the CSV last uploaded for the instance `name`."""
    instance = repository.get_instance(ctx.tenant, kind, name)
    content = repository.read_csv(ctx.tenant, name, instance.latest.version) if instance else None
    if content is None:
        raise codes.not_found(kind.value, name)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{name}.csv", content)
    return f"{name}.zip", buffer.getvalue()


def _store(
    ctx: CallContext,
    kind: TableKind,
    name: str,
    static_name: str,
    jurisdictions: tuple[str, ...],
    content: bytes,
    effective_from: datetime,
    model: dict[str, Any],
    *,
    replacing: TableInstance | None = None,
    bootstrap: bool = False,
) -> TableResource:
    """Check `content` whole, write its rows, then make it the newest version of instance `name`."""
    if not RESOURCE_NAME.fullmatch(name) or len(name) > 128:
        raise codes.TABLE_NAME_INVALID[kind.value](
            f"{name!r} is not a valid table name (a letter, then letters, digits, _ or $; at most 128 characters)"
        )
    schema = _schema(kind, static_name, model)
    rows = parser.parse_csv(content, schema, static_name)
    by_key = _laid_out(kind, rows, schema)
    selection, own = _versions_so_far(ctx.tenant, kind, name, static_name, replacing)
    entry = VersionEntry(
        name=name,
        version=new_locator(),
        effectiveFrom=effective_from,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        jurisdictions=jurisdictions,
        schemaDigest=schema.digest(),
        shards=layout.shard_count(len(by_key)),
        rows=len(rows),
    )
    repository.mark_pending_upload(ctx.tenant, kind, entry, _real_now())
    _write_rows(ctx.tenant, kind, entry, content, rows, by_key)

    instance = TableInstance(
        kind=kind,
        name=name,
        staticName=static_name,
        jurisdictions=jurisdictions,
        createdAt=replacing.createdAt if replacing else ctx.now,
        createdBy=replacing.createdBy if replacing else ctx.user_locator,
        selection=own.with_entry(entry, schema),
    )
    selection = selection.with_entry(entry, schema)
    uow = wiring.unit_of_work(ctx)
    repository.add_version(uow, ctx.tenant, instance, selection)
    if bootstrap:
        repository.put_bootstrap_status(
            uow, ctx.tenant, BootstrapStatus(name=name, resourceType=kind, status="created", updatedAt=ctx.now)
        )
    uow.record_event(
        f"resource.{kind.value}.{'replace' if replacing else 'create'}",
        {
            "name": name,
            "staticName": static_name,
            "resourceType": kind.value,
            "locator": entry.version,
            "jurisdictions": list(jurisdictions),
            "rows": len(rows),
            "effectiveFrom": effective_from,
            "source": "bootstrap" if bootstrap else "upload",
        },
    )
    if replacing:
        jobs.enqueue(uow, JobType.TABLES_CLEANUP, {"kind": kind.value, "staticName": static_name})
    uow.after_commit(lambda: _remember(ctx, kind, instance, selection))
    uow.commit()
    return TableResource(
        kind=kind,
        name=name,
        staticName=static_name,
        version=entry.version,
        jurisdictions=jurisdictions,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
    )


def _laid_out(kind: TableKind, rows: list[ParsedRow], schema: TableSchema) -> dict[str, Any]:
    """Rows by joined key (lookup and range tables; 400 for duplicate keys and overlapping ranges)."""
    if kind is TableKind.LOOKUP:
        return layout.lookup_rows(rows, schema)
    if kind is TableKind.RANGE:
        return dict(layout.range_rows(rows, schema))
    return {}


def _versions_so_far(
    tenant: str, kind: TableKind, name: str, static_name: str, replacing: TableInstance | None
) -> tuple[Selection, Selection]:
    """The static name's selection record and the instance's own versions; 409 for a create of an
    existing name."""
    if replacing is None:
        existing, selection = repository.instance_and_selection(tenant, kind, name, static_name)
        if existing is not None:
            raise codes.TABLE_ALREADY_EXISTS[kind.value](
                f"{kind.value} {name} already exists; replace it to upload a new version"
            )
        own = Selection()
    else:
        selection, own = repository.get_selection(tenant, kind, static_name), replacing.selection
    return selection, own


def _write_rows(
    tenant: str, kind: TableKind, entry: VersionEntry, content: bytes, rows: list[ParsedRow], by_key: dict[str, Any]
) -> None:
    """Everything the version needs before it becomes reachable: the CSV, then its rows."""
    repository.store_csv(tenant, entry.name, entry.version, content)
    if kind is TableKind.LOOKUP:
        repository.write_lookup_rows(tenant, entry.version, entry.shards, by_key)
    elif kind is TableKind.RANGE:
        repository.write_range_rows(tenant, entry.version, entry.shards, by_key)
    else:
        repository.store_constraint_rows(tenant, entry.name, entry.version, [row.values for row in rows])


def _remember(ctx: CallContext, kind: TableKind, instance: TableInstance, selection: Selection) -> None:
    """This process answers from the new version at once (other processes within the cache's TTL)."""
    for record, stored in (
        (repository.selection_key(ctx.tenant, kind, instance.staticName, by_static_name=True), selection),
        (repository.selection_key(ctx.tenant, kind, instance.name, by_static_name=False), instance.selection),
    ):
        cache.put_selection(
            ctx.tenant, record.sk, stored.model_copy(update={"revision": stored.revision + 1}), _real_now()
        )


def _schema(kind: TableKind, static_name: str, model: dict[str, Any]) -> TableSchema:
    """The table as the configuration declares it; 404 when it declares no such table of this kind."""
    definition = (model.get(kind.collection) or {}).get(static_name)
    if not isinstance(definition, dict):
        raise codes.not_found(kind.value, static_name)
    schema = TableSchema.of_definition(kind, definition)
    problems = [
        f"column {c.name} has dataType {c.dataType!r}, which tables do not support"
        for c in schema.columns
        if c.dataType not in DATA_TYPES
    ]
    if not schema.columns:
        problems.append("it declares no columns")
    if kind is TableKind.RANGE:
        problems += [
            f"its range column {bound} must be int, long or decimal"
            for bound in (schema.rangeStart, schema.rangeEnd)
            if bound and schema.column(bound).dataType not in NUMERIC_TYPES
        ]
    if problems:
        raise codes.TABLE_DEFINITION_INVALID[kind.value](
            f"The configuration of {kind.value} {static_name} cannot hold data: {'; '.join(problems)}"
        )
    return schema


# --- lookups -------------------------------------------------------------------------------------


def lookup(
    ctx: CallContext,
    table: str,
    key: Sequence[str],
    *,
    at: At = None,
    jurisdiction: str | None = None,
    by_static_name: bool = True,
) -> dict[str, Any] | None:
    """The row of lookup table `table` whose key columns hold `key` (one text per key column, in the
    configuration's order, read as the column's dataType: "007" finds int 7), in the version in force
    at `at` for `jurisdiction`: its other columns by name (numbers as Decimal or int, dates as ISO
    text, empty cells as None), or None when no row has that key. `table` is the static name, or an
    instance name with `by_static_name=False`. 404 when no version is in force; 400 when `key` does
    not fit the key columns."""
    _, item = _row_lookup(ctx, TableKind.LOOKUP, table, key, at, jurisdiction, by_static_name)
    return dict(item["values"]) if item is not None else None


def range_lookup(
    ctx: CallContext,
    table: str,
    key: Sequence[str],
    bound: Decimal | int,
    *,
    at: At = None,
    jurisdiction: str | None = None,
    by_static_name: bool = True,
) -> dict[str, Any] | None:
    """As lookup, for range table `table`: the row of that key with rangeStart <= bound < rangeEnd
    (no rangeEnd: open-ended); every non-key column, the bounds included. None when no range holds it."""
    target, item = _row_lookup(ctx, TableKind.RANGE, table, key, at, jurisdiction, by_static_name)
    if item is None:
        return None
    bound = Decimal(bound)
    chunk = layout.chunk_for(item.get("chunkStarts") or [], bound)
    if chunk:
        chunk_key = repository.chunk_key(ctx.tenant, target.entry.version, target.entry.shards, target.joined, chunk)
        item = _read_row(ctx.tenant, target.entry.version, chunk_key) or {"ranges": []}
    found = layout.find_range(item["ranges"], bound, target.schema)
    return dict(found) if found is not None else None


def table_record(
    ctx: CallContext,
    table: str,
    key: Sequence[str],
    *,
    at: At = None,
    jurisdiction: str | None = None,
    by_static_name: bool = True,
) -> dict[str, Any]:
    """lookup, with 404 (`tableRecord.not_found`) when no row has the key."""
    found = lookup(ctx, table, key, at=at, jurisdiction=jurisdiction, by_static_name=by_static_name)
    if found is None:
        raise codes.not_found("tableRecord", parser.join_key(key))
    return found


def range_table_record(
    ctx: CallContext,
    table: str,
    key: Sequence[str],
    bound: Decimal,
    *,
    at: At = None,
    jurisdiction: str | None = None,
    by_static_name: bool = True,
) -> dict[str, Any]:
    """range_lookup, with 404 (`rangeTableRecord.not_found`) when no range holds the bound."""
    found = range_lookup(ctx, table, key, bound, at=at, jurisdiction=jurisdiction, by_static_name=by_static_name)
    if found is None:
        raise codes.not_found("rangeTableRecord", f"{parser.join_key(key)} at {bound}")
    return found


def constraint_record(
    ctx: CallContext,
    table: str,
    filters: Sequence[str] = (),
    *,
    at: At = None,
    jurisdiction: str | None = None,
    by_static_name: bool = True,
) -> dict[str, list[Any]]:
    """For the rows of constraint table `table` whose first columns (the configuration's order) hold
    `filters` (an empty filter matches anything), every column's values: distinct where the column
    says makeDistinct, else one per row, in row order."""
    found = _constraint_table(ctx, table, at, jurisdiction, by_static_name)
    columns = found.schema.columns
    if len(filters) > len(columns):
        raise codes.TABLE_KEY_INVALID(
            f"At most {len(columns)} key filter(s), one per column of {table} "
            f"({', '.join(c.name for c in columns)}); {len(filters)} given",
            field_errors=[FieldError("key", "too many values")],
        )
    wanted = [parser.normalised(text, column.dataType) if text else "" for text, column in zip(filters, columns)]
    return layout.constraint_values(found.rows, found.schema, wanted)


def evaluate_constraints(
    ctx: CallContext,
    properties: Mapping[str, Any],
    data: Mapping[str, Any],
    at: At = None,
    *,
    jurisdiction: str | None = None,
) -> dict[str, list[str]]:
    """The options each constrained field of `properties` may take given `data`.

    `properties`: a data map of the configuration, field name -> PropertyRef (dict); fields without
    `constraint` are left out of the answer. `data`: the current values, field name -> value (text,
    number, boolean or a list of them); a ConditionValueRef `key` is looked up as a field name of
    `data`, else as a dotted path through nested objects, so callers put values of other elements
    there under the key the configuration uses. `at`/`jurisdiction` choose each constraint table's
    version as lookups do. Answers field name -> option texts (constraints.py says how rows match).
    404 when a named constraint table has no version in force; 409 when a constraint names a column
    its table lacks."""
    fields = constraints.constrained_fields(properties)
    tables = {name: _constraint_table(ctx, name, at, jurisdiction, True) for name in {f.table for f in fields}}
    return constraints.allowed_options(fields, data, tables)


def constraint_dependencies(
    ctx: CallContext, properties: Mapping[str, Any], *, static_locators: Mapping[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """The ConstraintDependency of each constrained field of `properties`: field name -> {"column",
    "table", "where": {table column: {"staticLocator", "fieldName", "values"}}}. `static_locators`
    maps a condition's `key` to the staticLocator of the element holding that field ("" when absent);
    `fieldName` is the key's last dotted segment and `values` the configured fixed values. Follows
    from the configuration alone (`ctx` reads nothing)."""
    return constraints.dependencies(constraints.constrained_fields(properties), static_locators or {})


@dataclass(frozen=True)
class _Target:
    """Where a lookup reads: the version in force, its schema, the joined key and its item."""

    entry: VersionEntry
    schema: TableSchema
    joined: str
    row: repository.Key


def _row_lookup(
    ctx: CallContext,
    kind: TableKind,
    name: str,
    key: Sequence[str],
    at: At,
    jurisdiction: str | None,
    by_static_name: bool,
) -> tuple[_Target, dict[str, Any] | None]:
    """The target and its item (None: no such key). A fresh cached selection costs nothing; a stale
    one guesses the version, and the refresh reads the guessed row in the same BatchGetItem."""
    tenant = ctx.tenant
    record = repository.selection_key(tenant, kind, name, by_static_name=by_static_name)
    cached = cache.selection(tenant, record.sk)
    if cached is not None and cached.fresh(_real_now()):
        target = _target(ctx, kind, name, cached.selection, key, at, jurisdiction, by_static_name)
        return target, _read_row(tenant, target.entry.version, target.row)
    guess = _guess(ctx, kind, name, cached.selection if cached else None, key, at, jurisdiction, by_static_name)
    if guess is not None and cache.row(tenant, guess.entry.version, guess.row.sk) is None:
        selection, guessed_row = repository.read_selection_and_row(tenant, record, guess.row)
        cache.put_row(tenant, guess.entry.version, guess.row.sk, guessed_row)
    else:
        selection = repository.read_selection(tenant, record)
    if selection is None:
        raise codes.not_found(kind.value, name)
    cache.put_selection(tenant, record.sk, selection, _real_now())
    target = _target(ctx, kind, name, selection, key, at, jurisdiction, by_static_name)
    return target, _read_row(tenant, target.entry.version, target.row)


def _real_now() -> datetime:
    """Real time, for what counts how long ago something happened in this system rather than in the
    tenant's business: a cached selection's age, an upload in flight, garbage's grace. A test clock may
    stand still or jump years; the business moments (a version's createdAt, what a lookup dated 400 days
    back may choose) stay on the tenant's clock."""
    return wiring.clock().now()


def _guess(
    ctx: CallContext,
    kind: TableKind,
    name: str,
    selection: Selection | None,
    key: Sequence[str],
    at: At,
    jurisdiction: str | None,
    by_static_name: bool,
) -> _Target | None:
    if selection is None:
        return None
    try:
        return _target(ctx, kind, name, selection, key, at, jurisdiction, by_static_name)
    except DomainError:
        return None  # the fresh selection decides what to answer


def _target(
    ctx: CallContext,
    kind: TableKind,
    name: str,
    selection: Selection,
    key: Sequence[str],
    at: At,
    jurisdiction: str | None,
    by_static_name: bool,
) -> _Target:
    entry, schema = _version_in_force(ctx, kind, name, selection, at, jurisdiction, by_static_name)
    joined = parser.query_key(key, schema)
    return _Target(entry, schema, joined, repository.row_key(ctx.tenant, entry.version, entry.shards, joined))


def _version_in_force(
    ctx: CallContext,
    kind: TableKind,
    name: str,
    selection: Selection,
    at: At,
    jurisdiction: str | None,
    by_static_name: bool,
) -> tuple[VersionEntry, TableSchema]:
    if not selection.entries:
        raise codes.not_found(kind.value, name)
    newest = max(selection.entries, key=lambda e: e.createdAt)
    moment = versions.selection_instant(selection.schemas[newest.schemaDigest].selectionTimeBasis, at, ctx.now)
    entry = versions.in_force(selection.entries, moment, jurisdiction, every_jurisdiction=not by_static_name)
    if entry is None:
        raise codes.not_found(kind.value, f"{name} (jurisdiction {jurisdiction or 'none'})")
    return entry, selection.schemas[entry.schemaDigest]


def _read_row(tenant: str, version: str, key: repository.Key) -> dict[str, Any] | None:
    cached = cache.row(tenant, version, key.sk)
    if cached is cache.ABSENT:
        return None
    if cached is not None:
        return cached  # type: ignore[return-value]
    found = repository.read_row(tenant, key)
    cache.put_row(tenant, version, key.sk, found)
    return found


def _constraint_table(
    ctx: CallContext, name: str, at: At, jurisdiction: str | None, by_static_name: bool
) -> constraints.ConstraintTable:
    tenant = ctx.tenant
    record = repository.selection_key(tenant, TableKind.CONSTRAINT, name, by_static_name=by_static_name)
    cached = cache.selection(tenant, record.sk)
    if cached is not None and cached.fresh(_real_now()):
        selection = cached.selection
    else:
        read = repository.read_selection(tenant, record)
        if read is None:
            raise codes.not_found(TableKind.CONSTRAINT.value, name)
        cache.put_selection(tenant, record.sk, read, _real_now())
        selection = read
    entry, schema = _version_in_force(ctx, TableKind.CONSTRAINT, name, selection, at, jurisdiction, by_static_name)
    found = cache.constraint_table(tenant, entry.version)
    if found is None:
        rows = repository.read_constraint_rows(tenant, entry.name, entry.version)
        if rows is None:
            raise codes.not_found(TableKind.CONSTRAINT.value, name)
        found = constraints.ConstraintTable(schema, tuple(rows))
        cache.put_constraint_table(tenant, entry.version, found)
    return found


# --- bootstrap -----------------------------------------------------------------------------------


def load_bootstrap(ctx: CallContext, cursor: int = 0) -> dict[str, int]:
    """One step of loading the table resources of the tenant's bootstrap record (the package
    createTenant deployed): from resource number `cursor` on, as many as fit BOOTSTRAP_STEP_BYTES of
    CSV (at least one); then the step enqueues the next one. Each resource becomes an instance of its
    static name whose version is in force from the earliest selectionStartTime of the resource groups
    naming it (the tenant's creation without one). A resource that cannot load (unknown table, bad CSV)
    is marked failed with the reason and the others still load; other errors propagate, so the job
    runs again.

    Safe to run again from the start, and beside another run of itself: a resource with a recorded
    outcome is skipped, one loaded by another run meanwhile counts as skipped (never as failed), the
    rows of an attempt that died before its final transaction are never reachable and the cleanup job
    deletes them, and the next step has a locator derived from where it starts, so it is enqueued once.
    Answers how many of this step's resources were created, failed and skipped, and how many are left."""
    record = configuration.bootstrap_record(ctx)
    counts: Counter[str] = Counter(created=0, failed=0, skipped=0)
    if record is None:
        return {**counts, "remaining": 0}
    model = configuration.model(ctx, record.version)
    instances = ((model.get("bootstrap") or {}).get("resources") or {}).get("resourceInstances") or {}
    resources = _table_resources(record, model)
    end = _bootstrap_step_end(resources, cursor)
    done = {status.name for status in repository.bootstrap_statuses(ctx.tenant)}
    for resource, kind in resources[cursor:end]:
        if resource.instance in done:
            counts["skipped"] += 1
            continue
        spec = instances.get(resource.instance) or {}
        start = versions.bootstrap_start(resource.instance, record.resourceGroups) or record.createdAt
        counts[_load_bootstrap_resource(ctx, resource, kind, tuple(spec.get("jurisdictions") or ()), start, model)] += 1
    if end < len(resources):
        _enqueue_bootstrap_step(ctx, record, end)
    return {**counts, "remaining": len(resources) - end}


def _table_resources(record: BootstrapRecord, model: dict[str, Any]) -> list[tuple[BootstrapFile, TableKind]]:
    """The record's table resources in record order, each with its kind of table."""
    return [
        (resource, kind)
        for resource in record.resources
        if (kind := _bootstrap_kind(resource.kind, resource.staticName, model)) is not None
    ]


def _bootstrap_step_end(resources: Sequence[tuple[Any, TableKind]], cursor: int) -> int:
    """Where the step starting at `cursor` ends: it depends on the record alone, so a retried step
    covers the same resources and enqueues the same next step."""
    end, size = cursor, 0
    while end < len(resources) and (end == cursor or size + resources[end][0].size <= BOOTSTRAP_STEP_BYTES):
        size += resources[end][0].size
        end += 1
    return end


def _load_bootstrap_resource(
    ctx: CallContext,
    resource: Any,
    kind: TableKind,
    jurisdictions: tuple[str, ...],
    start: datetime,
    model: dict[str, Any],
) -> str:
    """Load one resource; answers "created", "failed" or "skipped" (another run loaded it meanwhile)."""
    try:
        content = repository.read_bootstrap_file(ctx.tenant, resource.path)
        if content is None:
            raise codes.TABLE_BOOTSTRAP_FILE_MISSING(f"The file {resource.path} is missing")
        _store(ctx, kind, resource.instance, resource.staticName, jurisdictions, content, start, model, bootstrap=True)
        return "created"
    except DomainError as error:
        if isinstance(error, AlreadyExists) and repository.bootstrap_status(ctx.tenant, resource.instance):
            return "skipped"  # the instance and its status are committed together: another run loaded it
        return "failed" if _record_bootstrap_failure(ctx, resource.instance, kind, error) else "skipped"


def _enqueue_bootstrap_step(ctx: CallContext, record: BootstrapRecord, cursor: int) -> None:
    jobs.enqueue_once(
        ctx, JobType.TABLES_BOOTSTRAP, {"cursor": cursor}, locator=configuration.bootstrap_step_locator(record, cursor)
    )


def bootstrap_status(ctx: CallContext) -> list[BootstrapStatus]:
    """Each resource of the tenant's bootstrap record, in record order. A table is queued until the job
    loads it, then created or failed (with the reason); failed with the job's error too when the job of its
    step, or of a step before it, gave up (no later step runs then). Any other resource (document
    templates and snippets, static documents, fonts) was stored with the deployment: created then."""
    record = configuration.bootstrap_record(ctx)
    if record is None:
        return []
    resources = _table_resources(record, configuration.model(ctx, record.version))
    stored = {status.name: status for status in repository.bootstrap_statuses(ctx.tenant)}
    given_up = _step_given_up(ctx, record, resources, stored)
    tables: dict[str, BootstrapStatus] = {}
    for position, (resource, kind) in enumerate(resources):
        status = stored.get(resource.instance)
        if status is None and given_up is not None and position >= given_up[0]:
            status = BootstrapStatus(
                name=resource.instance,
                resourceType=kind.value,
                status="failed",
                updatedAt=given_up[1]["updatedAt"],
                error=given_up[1]["error"],
            )
        tables[resource.instance] = status or BootstrapStatus(
            name=resource.instance, resourceType=kind.value, status="queued", updatedAt=record.createdAt
        )
    answer = []
    for resource in record.resources:
        resource_type = resource.resource_type
        if resource.instance in tables:
            answer.append(tables[resource.instance])
        elif resource_type is not None:
            answer.append(
                BootstrapStatus(
                    name=resource.instance, resourceType=resource_type, status="created", updatedAt=record.createdAt
                )
            )
    return answer


def _step_given_up(
    ctx: CallContext,
    record: BootstrapRecord,
    resources: Sequence[tuple[BootstrapFile, TableKind]],
    stored: Mapping[str, BootstrapStatus],
) -> tuple[int, dict[str, Any]] | None:
    """The first step with a resource not loaded yet: (its cursor, its job) when that job failed; None when
    it is still to run or running, or when every resource is loaded. One GetItem."""
    cursor = 0
    while cursor < len(resources):
        end = _bootstrap_step_end(resources, cursor)
        if any(resource.instance not in stored for resource, _ in resources[cursor:end]):
            job = jobs.get_job(ctx.tenant, configuration.bootstrap_step_locator(record, cursor))
            return (cursor, job) if job is not None and job["status"] == jobs.JobStatus.FAILED else None
        cursor = end
    return None


def _bootstrap_kind(folder: str, static_name: str, model: dict[str, Any]) -> TableKind | None:
    """The kind of table a bootstrap file holds: by its folder, and the collection declaring it."""
    kinds = _BOOTSTRAP_FOLDERS.get(folder)
    if kinds is None:
        return None
    return next((kind for kind in kinds if static_name in (model.get(kind.collection) or {})), kinds[0])


def _record_bootstrap_failure(ctx: CallContext, instance: str, kind: TableKind, error: DomainError) -> bool:
    """Record the failure and its event, unless another run recorded an outcome first (answers False)."""
    reason = f"{error.code}: {error.message}"
    uow = wiring.unit_of_work(ctx)
    repository.put_bootstrap_status(
        uow,
        ctx.tenant,
        BootstrapStatus(name=instance, resourceType=kind, status="failed", updatedAt=ctx.now, error=reason),
        first=True,
    )
    uow.record_event(BOOTSTRAP_FAILED_EVENT, {"name": instance, "resourceType": kind.value, "error": reason})
    try:
        uow.commit()
    except AlreadyExists:
        return False
    return True


# --- cleanup -------------------------------------------------------------------------------------


def clean_up(ctx: CallContext, kind: TableKind | None = None, static_name: str | None = None) -> dict[str, int]:
    """Retire the versions no lookup may choose any more (of one static name, or of every one), take
    uploads that never committed for lost, and delete the rows of both once GARBAGE_GRACE has passed.
    Safe to run again and beside an upload (which wins: the cleanup's transaction fails and it runs again)."""
    names = [(kind, static_name)] if kind is not None and static_name else repository.static_names(ctx.tenant)
    retired = sum(_retire_superseded(ctx, table_kind, name) for table_kind, name in names)
    lost = repository.claim_lost_uploads(ctx.tenant, _real_now() - GARBAGE_GRACE)
    deleted, rows = repository.delete_garbage(ctx.tenant, _real_now() - GARBAGE_GRACE)
    return {"retired": retired, "lostUploads": lost, "versionsDeleted": deleted, "rowsDeleted": rows}


def _retire_superseded(ctx: CallContext, kind: TableKind, static_name: str) -> int:
    selection = repository.get_selection(ctx.tenant, kind, static_name)
    kept = versions.kept(selection.entries, ctx.now - VERSION_RETENTION)
    retired = {entry.version for entry in selection.entries} - kept
    return repository.retire(ctx.tenant, kind, static_name, retired, _real_now()) if retired else 0

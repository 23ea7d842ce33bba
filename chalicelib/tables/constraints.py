"""The constraint engine: the options a constrained data field may take, given the other values.

A PropertyRef constrains its field with `constraint: {table, column, where}`: `table` is a constraint
table's static name, `column` the table column whose values are the field's options, and `where`
maps other columns of that table to a ConditionValueRef `{key, values}`:

- `key` names the data field whose current value the column must equal (a field name, or a dotted
  path into nested objects of `data`); a list value matches any of its items;
- `values`, when not empty, are the only values the column may have, whatever the data holds.

A row of the table matches when every condition holds; a condition whose `key` has no value in the
data (missing, null, "" or []) and that lists no `values` narrows nothing. The field's options are the
distinct values of its column among the matching rows, in row order, as text (numbers without
trailing zeros, booleans as true/false). Values are compared as the column's dataType reads them,
so "1.50" in the data equals 1.5 in the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chalicelib.core import codes
from chalicelib.tables.models import TableSchema
from chalicelib.tables.parser import canonical, normalised


@dataclass(frozen=True)
class Condition:
    column: str
    key: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class FieldConstraint:
    field: str
    table: str
    column: str
    where: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class ConstraintTable:
    schema: TableSchema
    rows: Sequence[Mapping[str, Any]]


def constrained_fields(properties: Mapping[str, Any]) -> list[FieldConstraint]:
    """The constraints of a data map (`{field name: PropertyRef}`), in field order; fields without a
    `constraint` are left out."""
    found = []
    for field, definition in properties.items():
        constraint = definition.get("constraint") if isinstance(definition, Mapping) else None
        if not isinstance(constraint, Mapping):
            continue
        where = constraint.get("where")
        if not isinstance(where, Mapping):
            where = {}
        conditions = tuple(
            Condition(
                column=column,
                key=str(condition.get("key") or ""),
                values=tuple(str(value) for value in condition.get("values") or ()),
            )
            for column, condition in where.items()
            if isinstance(condition, Mapping)
        )
        found.append(
            FieldConstraint(
                field=field, table=str(constraint.get("table")), column=str(constraint.get("column")), where=conditions
            )
        )
    return found


def allowed_options(
    constraints: Sequence[FieldConstraint], data: Mapping[str, Any], tables: Mapping[str, ConstraintTable]
) -> dict[str, list[str]]:
    """Field name -> its options. `tables` holds every table the constraints name (by static name);
    409 when a constraint names a column its table lacks."""
    answer: dict[str, list[str]] = {}
    for constraint in constraints:
        table = tables[constraint.table]
        _require_columns(constraint, table.schema)
        tests = [
            (condition.column, wanted)
            for condition in constraint.where
            for wanted in (_wanted(condition, data, table.schema),)
            if wanted is not None
        ]
        options: dict[str, None] = {}
        for row in table.rows:
            if all(canonical(row.get(column)) in wanted for column, wanted in tests):
                options.setdefault(canonical(row.get(constraint.column)), None)
        answer[constraint.field] = list(options)
    return answer


def dependencies(
    constraints: Sequence[FieldConstraint], static_locators: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Field name -> ConstraintDependency `{column, table, where: {column: {staticLocator, fieldName,
    values}}}`: which field each condition reads (`fieldName` is the last segment of its `key`;
    `staticLocator` is `static_locators[key]`, "" when not given) and its fixed `values`."""
    return {
        constraint.field: {
            "column": constraint.column,
            "table": constraint.table,
            "where": {
                condition.column: {
                    "staticLocator": static_locators.get(condition.key, ""),
                    "fieldName": condition.key.rsplit(".", 1)[-1],
                    "values": list(condition.values),
                }
                for condition in constraint.where
            },
        }
        for constraint in constraints
    }


def data_value(data: Mapping[str, Any], key: str) -> Any:
    """The value `key` names: a field of `data`, else a dotted path through nested objects."""
    if key in data:
        return data[key]
    node: Any = data
    for part in key.strip(".").split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _wanted(condition: Condition, data: Mapping[str, Any], schema: TableSchema) -> set[str] | None:
    """The texts the condition's column may have, or None when it narrows nothing."""
    data_type = schema.column(condition.column).dataType
    wanted = {normalised(value, data_type) for value in condition.values} if condition.values else None
    current = data_value(data, condition.key) if condition.key else None
    items = current if isinstance(current, list) else [current]
    given = {normalised(item, data_type) for item in items if item is not None and item != ""}
    if given:
        wanted = given if wanted is None else wanted & given
    return wanted


def _require_columns(constraint: FieldConstraint, schema: TableSchema) -> None:
    names = {c.name for c in schema.columns}
    missing = [column for column in (constraint.column, *(c.column for c in constraint.where)) if column not in names]
    if missing:
        raise codes.CONSTRAINT_TABLE_COLUMN_UNKNOWN(
            f"The constraint of field '{constraint.field}' names column(s) {', '.join(missing)}, "
            f"which constraint table {constraint.table} does not have"
        )

"""The data model as GET .../deployments/datamodel answers it: the platform's ConfigurationRef.

The normal form (validator.py) is the package with the platform's defaults, and the download gives it
back as it is. The answer also carries every field the platform's definition requires there:

- a field a package may leave out with no default (`PaymentRef.extend` and `numberingPlan`, ...) as
  its schema's `answered` value (schema.py): no name, `false`;
- a required field an entity leaves to the one it `extend`s (a payment type's `numberingTrigger`, a
  data type's `data`), also unresolved, as the value it inherits: resolving the answer gives the same.

And the definition types PropertyRef's `min`, `max`, `defaultValue` and `options` as strings, which a
package may write as numbers or booleans (`"min": 0`, as the platform's reader accepts): the answer
gives their text (`"0"`, `"true"`).
"""

import copy
from decimal import Decimal
from typing import Any

from chalicelib.configuration.schema import ROOT, SCHEMAS, TEXT, Kind, ListOf, MapOf, Obj, Schema


def datamodel_answer(model: dict[str, Any], resolved: dict[str, Any]) -> dict[str, Any]:
    """`model` (the normal form, or `resolved` itself) as the platform answers it; `resolved` is the
    model with every extend chain applied (resolve.py). The answer shares values with both: mutate none."""
    return _object(model, SCHEMAS[ROOT.schema], resolved)


def _object(obj: dict[str, Any], schema: Schema, resolved: Any) -> dict[str, Any]:
    inherited = resolved if isinstance(resolved, dict) else {}
    answer = {key: _value(value, schema.fields.get(key), inherited.get(key)) for key, value in obj.items()}
    for key in sorted(schema.required | schema.answered.keys()):
        if key in answer:
            continue
        if key in inherited:
            answer[key] = _value(inherited[key], schema.fields.get(key), inherited[key])
        elif key in schema.answered:
            answer[key] = copy.deepcopy(schema.answered[key])
    return answer


def _value(value: Any, kind: Kind | None, resolved: Any) -> Any:
    match kind:
        case Obj(schema=name) if isinstance(value, dict):
            return _object(value, SCHEMAS[name], resolved)
        case MapOf(value=item) if isinstance(value, dict):
            inherited = resolved if isinstance(resolved, dict) else {}
            return {key: _value(each, item, inherited.get(key)) for key, each in value.items()}
        case ListOf(item=item) if isinstance(value, list):
            if not (isinstance(resolved, list) and len(resolved) == len(value)):
                resolved = [None] * len(value)
            return [_value(each, item, inherited) for each, inherited in zip(value, resolved)]
        case _ if kind == TEXT:
            return _text(value)
    return value


def _text(value: Any) -> Any:
    """A number or boolean as the platform's reader turns it into a string; anything else as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Decimal):
        return str(value)
    return value

"""A checkpoint record as JSON and back, with every float kept.

pydantic writes NaN and +-inf as ``null``, which a ``float`` field rejects on read (RADAR's last-round
``s = NaN``): :func:`dumps` writes the constants ``NaN``/``Infinity``; :func:`loads` reads ``null`` floats as NaN.
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["dumps", "loads"]

R = TypeVar("R", bound=BaseModel)

_SERIALIZERS: dict[type, Any] = {}
_BUILDING = threading.Lock()


def _constants(schema: Any) -> tuple[Any, list[type]]:
    """A copy of a core schema whose models write non-finite floats as JSON constants, and its model classes."""
    out = copy.deepcopy(schema)
    classes: list[type] = []
    stack = [out]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x.get("type") == "model":
                x["config"] = {**x.get("config", {}), "ser_json_inf_nan": "constants"}
                classes.append(x["cls"])
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out, classes


def _serializer(t: type[BaseModel]) -> Any:
    ser = _SERIALIZERS.get(t)
    if ser is None:
        from pydantic_core import SchemaSerializer

        with _BUILDING:
            schema, classes = _constants(t.__pydantic_core_schema__)
            # pydantic-core reuses a finished model class's own serializer for a nested model (with its
            # config, so null again): the classes are marked unfinished while this copy is built
            done = {c: c.__dict__.get("__pydantic_complete__") for c in classes}
            try:
                for c in done:
                    type.__setattr__(c, "__pydantic_complete__", False)
                ser = SchemaSerializer(schema, {"ser_json_inf_nan": "constants"})
            except Exception:  # noqa: BLE001 - a schema this copy cannot take: the slower plain route
                ser = False
            finally:
                for c, was in done.items():
                    type.__setattr__(c, "__pydantic_complete__", was)
        _SERIALIZERS[t] = ser
    return ser


def dumps(rec: BaseModel) -> str:
    """``rec`` as one line of JSON, ``NaN``/``Infinity``/``-Infinity`` kept."""
    ser = _serializer(type(rec))
    if ser is False:
        return json.dumps(rec.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
    return ser.to_json(rec).decode("utf-8")


def loads(raw: bytes | str, record: type[R]) -> R:
    """The record in ``raw``; a ``null`` where a float must be reads as NaN."""
    try:
        return record.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors()
        if not errors or any(e["type"] != "float_type" or e.get("input", 0) is not None for e in errors):
            raise
        data = json.loads(raw)
        for e in errors:
            _set(data, e["loc"], float("nan"))
        return record.model_validate(data)


def _set(data: Any, loc: tuple[Any, ...], value: Any) -> None:
    for key in loc[:-1]:
        data = data[key]
    data[loc[-1]] = value

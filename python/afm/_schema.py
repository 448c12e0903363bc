"""JSON Schemas from Python types, and values of those types from generated JSON.

A pydantic model uses its own `model_json_schema()` (fields in declaration order, `Field`
constraints such as `ge`, `max_length`, `pattern` become the schema's keywords, which the engine
enforces while decoding) and `model_validate()`. A dataclass is mapped here: str, int, float,
bool, None, list[T], tuple[T, ...], dict[str, T], Optional / Union, Literal, Enum and nested
dataclasses; `dataclasses.field(metadata={...})` adds its keys to the field's schema
("description", "minimum", "maxLength" ...). Every dataclass field without a default is
required, and no other keys are allowed.
"""
import dataclasses
import enum
import json
import types
import typing

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def is_pydantic(cls):
    return isinstance(cls, type) and hasattr(cls, "model_json_schema") and hasattr(cls, "model_validate")


def schema_for(cls):
    """The JSON Schema (a dict) for a pydantic model class, a dataclass or a typing type."""
    if is_pydantic(cls):
        return cls.model_json_schema()
    return type_schema(cls)


def type_schema(tp):
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if dataclasses.is_dataclass(tp):
        return dataclass_schema(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if is_pydantic(tp):
        return tp.model_json_schema()
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [type_schema(a) for a in args]}
    if origin in (list, typing.List):
        return {"type": "array", "items": type_schema(args[0]) if args else {}}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0])}
        return {"type": "array", "prefixItems": [type_schema(a) for a in args],
                "minItems": len(args), "maxItems": len(args)}
    if origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"dict keys must be str in a generated type, got {args[0]!r}")
        return {"type": "object", "additionalProperties": type_schema(args[1]) if args else {}}
    if tp is typing.Any:
        return {}
    raise TypeError(f"afm cannot generate values of type {tp!r}")


def dataclass_schema(cls):
    hints = typing.get_type_hints(cls)
    properties, required = {}, []
    for f in dataclasses.fields(cls):
        prop = dict(type_schema(hints[f.name]))
        prop.update(f.metadata or {})
        properties[f.name] = prop
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    schema = {"type": "object", "properties": properties, "required": required,
              "additionalProperties": False}
    if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
        schema["description"] = cls.__doc__.strip()
    return schema


def build(tp, value):
    """A value of type `tp` from the generated JSON value (dicts, lists, scalars)."""
    if is_pydantic(tp):
        return tp.model_validate(value)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return tp(**{k: build(hints[k], v) for k, v in value.items()})
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (list, typing.List) and args:
        return [build(args[0], v) for v in value]
    if origin is tuple and args:
        item_types = [args[0]] * len(value) if args[-1] is Ellipsis else args
        return tuple(build(t, v) for t, v in zip(item_types, value))
    if origin is dict and args:
        return {k: build(args[1], v) for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        for option in args:  # the first type the value builds as
            try:
                if option in _SCALARS and not _is_scalar(option, value):
                    continue
                return build(option, value)
            except (TypeError, ValueError):
                continue
        return value
    if tp is float and isinstance(value, int):
        return float(value)
    return value


def _is_scalar(tp, value):
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def dumps(schema):
    return json.dumps(schema, ensure_ascii=False)

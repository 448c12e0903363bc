"""Tools from plain Python functions: the parameters' type hints give the arguments' JSON
Schema (as for generated types, _schema.py), the docstring's first paragraph the description.
The model's arguments are always valid for the schema (enforced while decoding); they are
built into the hinted types before the call. A function returning a str hands it to the model
as is; anything else is sent as JSON."""
import inspect
import json
import typing

from . import _schema


def tool(fn=None, *, name=None, description=None):
    """Decorator (or plain call) marking a function as a tool: `@afm.tool` or
    `afm.tool(fn, name="...", description="...")`. Functions passed to a session directly
    are wrapped the same way."""
    def wrap(f):
        f.__afm_tool__ = {"name": name or f.__name__,
                          "description": description or _first_paragraph(f.__doc__)}
        return f
    return wrap(fn) if fn is not None else wrap


def _first_paragraph(doc):
    return inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ") if doc else ""


def parameters_schema(fn):
    hints = typing.get_type_hints(fn)
    properties, required = {}, []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{fn.__name__}: *args / **kwargs cannot be tool parameters")
        if p.name not in hints:
            raise TypeError(f"{fn.__name__}: parameter '{p.name}' needs a type hint")
        properties[p.name] = _schema.type_schema(hints[p.name])
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def native_tool(fn):
    """(name, description, parameters schema JSON, call) for a function (decorated with @tool
    or not): what the native session takes. The session object keeps these tuples, and so
    the functions, alive."""
    meta = getattr(fn, "__afm_tool__", None) or {"name": fn.__name__,
                                                 "description": _first_paragraph(fn.__doc__)}
    hints = typing.get_type_hints(fn)

    def call(arguments_json):
        args = json.loads(arguments_json)
        kwargs = {k: _schema.build(hints[k], v) for k, v in args.items()}
        result = fn(**kwargs)
        return result if isinstance(result, str) else json.dumps(result, default=str)

    return (meta["name"], meta["description"], json.dumps(parameters_schema(fn)), call)

"""SystemLanguageModel and LanguageModelSession (Apple's Foundation Models API, in Python)."""
import dataclasses
import json
import os
import queue
import threading
import typing

from . import _afm, _schema, _tools
from .errors import typed


@dataclasses.dataclass(frozen=True)
class GenerationOptions:
    """How a response is sampled: "greedy" (default), "top_k" (with top_k) or "top_p" (with
    top_p); seed makes random sampling repeatable; max_tokens caps the response;
    prompt_lookup > 0 turns on speculative decoding by prompt lookup (same response, faster on
    copying tasks)."""

    sampling: str = "greedy"
    top_k: int = 40
    top_p: float = 0.9
    seed: int = 0
    temperature: typing.Optional[float] = None
    max_tokens: typing.Optional[int] = None
    prompt_lookup: int = 0

    def native(self):
        return _afm.make_options(self.sampling, self.top_k, self.top_p, self.seed,
                                 self.temperature, self.max_tokens, self.prompt_lookup)


@dataclasses.dataclass(frozen=True)
class Usage:
    prompt_tokens: int     # context tokens before each model call, summed
    prefilled_tokens: int  # of those, evaluated by this request (the rest came from the cache)
    response_tokens: int


@dataclasses.dataclass(frozen=True)
class Response:
    content: typing.Any  # str, or the value of the type / schema asked for
    usage: Usage


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """A streamed response so far: the text, or the partial JSON value (dicts and lists with
    what has been generated); the last snapshot is complete and holds the final value (an
    instance of the type asked for)."""

    content: typing.Any
    is_complete: bool


@dataclasses.dataclass(frozen=True)
class Adapter:
    """A LoRA adapter GGUF for a base model (docs/adapters.md); `scale` multiplies its update
    (0: the base model). Apple's SystemLanguageModel.Adapter."""
    path: str
    scale: float = 1.0


class SystemLanguageModel:
    """A GGUF model file (or the shipped default model: `SystemLanguageModel.default()`),
    optionally with a LoRA adapter (`adapter=SystemLanguageModel.Adapter(path)`): sessions then
    run the adapter unmerged on the shared base weights. A model that cannot run (a missing
    file, an adapter made for another base) is not available, with the reason."""

    Adapter = Adapter

    def __init__(self, path=None, *, adapter=None, context_size=0, threads=0, draft_model="",
                 _native=None):
        if _native is None:
            _native = (_afm.SystemLanguageModel.default_model(context_size, threads) if path is None
                       else _afm.SystemLanguageModel(path, context_size, threads, draft_model))
        self._native = _native
        if adapter is not None:
            self._native = _afm.SystemLanguageModel.with_adapter(_native, os.fspath(adapter.path),
                                                                 adapter.scale)

    @classmethod
    def default(cls, *, adapter=None, context_size=0, threads=0):
        """$AFM_MODEL, models/afm-device-21m.gguf in the working directory or above it, or the
        installed copy."""
        return cls(adapter=adapter,
                   _native=_afm.SystemLanguageModel.default_model(context_size, threads))

    def with_adapter(self, adapter):
        """The same base weights with `adapter` (an Adapter)."""
        return SystemLanguageModel(adapter=adapter, _native=self._native)

    @property
    def is_available(self):
        return self._native.is_available

    @property
    def unavailable_reason(self):
        return self._native.unavailable_reason

    @property
    def context_size(self):
        return self._native.context_size


def _target(generating, schema):
    """(schema JSON text, name, type or None) for a request's response format."""
    if generating is not None and schema is not None:
        raise TypeError("give generating= or schema=, not both")
    if generating is not None:
        return _schema.dumps(_schema.schema_for(generating)), generating.__name__, generating
    if schema is not None:
        return _schema.dumps(schema), "response", None
    return None, None, None


def _result(value_json, tp):
    value = json.loads(value_json)
    return _schema.build(tp, value) if tp is not None else value


class LanguageModelSession:
    """A conversation with a model: each respond() adds its turn to the transcript.

    tools: Python functions (their type hints give the arguments' schema; several calls in one
    turn run concurrently, each on its own thread). One request at a time per session
    (ConcurrentRequests otherwise). The GIL is released while the model runs."""

    def __init__(self, model=None, *, tools=(), instructions=""):
        self.model = model if model is not None else SystemLanguageModel.default()
        self._tools = [_tools.native_tool(t) for t in tools]  # the native session borrows them
        self._native = _afm.Session(self.model._native, self._tools, instructions)

    def respond(self, prompt, *, generating=None, schema=None, options=None,
                include_schema_in_prompt=True):
        """The response: text, or (generating=a dataclass / pydantic model / typing type) a
        value of that type, or (schema=a JSON Schema dict) a JSON value valid for it."""
        options = (options or GenerationOptions()).native()
        schema_json, name, tp = _target(generating, schema)
        try:
            if schema_json is None:
                text, usage = self._native.respond(prompt, options)
                return Response(text, Usage(*usage))
            value, usage = self._native.respond_schema(prompt, schema_json, name, options,
                                                       include_schema_in_prompt)
        except _afm.GenerationError as e:
            raise typed(e) from None
        return Response(_result(value, tp), Usage(*usage))

    def stream_response(self, prompt, *, generating=None, schema=None, options=None,
                        include_schema_in_prompt=True):
        """Yields Snapshots as the response grows; the last is complete."""
        options = (options or GenerationOptions()).native()
        schema_json, name, tp = _target(generating, schema)
        snapshots = queue.Queue()
        done = object()
        outcome = {}

        def run():
            try:
                if schema_json is None:
                    outcome["value"] = self._native.stream(
                        prompt, lambda text, complete: snapshots.put((text, False)), options)[0]
                else:
                    outcome["value"] = _result(self._native.stream_schema(
                        prompt, schema_json, name,
                        lambda text, complete: snapshots.put((json.loads(text), False)),
                        options, include_schema_in_prompt)[0], tp)
            except _afm.GenerationError as e:
                outcome["error"] = typed(e)
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                outcome["error"] = e
            snapshots.put(done)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        try:
            while (item := snapshots.get()) is not done:
                yield Snapshot(*item)
        finally:
            worker.join()
        if "error" in outcome:
            raise outcome["error"]
        yield Snapshot(outcome["value"], True)

    def prewarm(self, prompt_prefix=""):
        """Evaluates the instructions (and a prompt prefix) ahead of the first request."""
        self._native.prewarm(prompt_prefix)

    @property
    def transcript(self):
        """The conversation so far: a list of {"kind", "text", ...} dicts."""
        return json.loads(self._native.transcript())

    @property
    def is_responding(self):
        return self._native.is_responding

"""The Python package (python/afm, module afm._afm) on the shipped default model: text and
guided responses equal to `afm respond`'s for the same request (the C++ CLI as the oracle of
the binding), pydantic models and dataclasses as response types (schema from the class, fields
in declaration order, constraints enforced), streaming snapshots, tools from typed functions,
typed errors, transcript and prewarm. Run by CTest with PYTHONPATH pointing at the build.
"""
import dataclasses
import enum
import json
import os
import subprocess
import threading
import typing

import jsonschema
import pydantic
import pytest

import afm

AFM = os.environ.get("AFM_BIN", "build/afm")
MODEL = "models/afm-device-21m.gguf"
EXTRACT = "You are a careful assistant that extracts structured data from text."
TEXT = "Tom Berg is a 52-year-old baker who lives in Oslo."
SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string"},
                         "age": {"type": "integer", "minimum": 0, "maximum": 150},
                         "city": {"type": "string"}},
          "required": ["name", "age", "city"], "additionalProperties": False}


@pytest.fixture(scope="module")
def model():
    m = afm.SystemLanguageModel(MODEL)
    assert m.is_available, m.unavailable_reason
    return m


def cli_respond(tmp_path, prompt, system, schema=None):
    cmd = [AFM, "respond", "-m", MODEL, "-p", prompt, "--system", system, "--json"]
    if schema is not None:
        path = tmp_path / "schema.json"
        path.write_text(json.dumps(schema))
        cmd += ["--schema", str(path)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def test_version():
    assert afm.__version__.count(".") == 2


def test_text_and_schema_match_the_cli(model, tmp_path):
    session = afm.LanguageModelSession(model, instructions="You are a helpful assistant.")
    r = session.respond("What is 12 + 7?")
    want = cli_respond(tmp_path, "What is 12 + 7?", "You are a helpful assistant.")
    assert r.content == want["text"]
    assert r.usage.response_tokens > 0 and r.usage.prompt_tokens > 0
    value = afm.LanguageModelSession(model, instructions=EXTRACT).respond(TEXT, schema=SCHEMA).content
    want = cli_respond(tmp_path, TEXT, EXTRACT, SCHEMA)
    assert value == json.loads(want["text"])
    jsonschema.validate(value, SCHEMA)


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0, le=150, description="age in years")
    city: str


def test_pydantic_model(model):
    assert list(Person.model_json_schema()["properties"]) == ["name", "age", "city"]
    p = afm.LanguageModelSession(model, instructions=EXTRACT).respond(TEXT, generating=Person).content
    assert isinstance(p, Person) and 0 <= p.age <= 150 and p.name and p.city


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclasses.dataclass
class Address:
    city: str
    country: typing.Optional[str] = None


@dataclasses.dataclass
class Employee:
    name: str
    age: int = dataclasses.field(metadata={"minimum": 18, "maximum": 99})
    address: Address = None
    skills: list[str] = dataclasses.field(default_factory=list)
    level: typing.Literal["junior", "senior"] = "junior"
    unit: Unit = Unit.CELSIUS


def test_dataclass_schema_and_value(model):
    schema = afm._schema.schema_for(Employee)
    assert list(schema["properties"]) == ["name", "age", "address", "skills", "level", "unit"]
    assert schema["required"] == ["name", "age"] and schema["additionalProperties"] is False
    assert schema["properties"]["age"] == {"type": "integer", "minimum": 18, "maximum": 99}
    assert schema["properties"]["level"] == {"enum": ["junior", "senior"]}
    assert schema["properties"]["unit"] == {"enum": ["celsius", "fahrenheit"]}
    assert schema["properties"]["address"]["properties"]["country"] == \
        {"anyOf": [{"type": "string"}, {"type": "null"}]}
    e = afm.LanguageModelSession(model, instructions=EXTRACT).respond(
        "Ana Lima, 34, is a senior nurse in Lisbon, Portugal.", generating=Employee).content
    assert isinstance(e, Employee) and 18 <= e.age <= 99 and e.level in ("junior", "senior")
    assert e.address is None or isinstance(e.address, Address)
    assert isinstance(e.unit, Unit) and all(isinstance(s, str) for s in e.skills)


def test_stream_snapshots_grow_to_the_response(model):
    whole = afm.LanguageModelSession(model, instructions=EXTRACT).respond(TEXT, generating=Person)
    snaps = list(afm.LanguageModelSession(model, instructions=EXTRACT).stream_response(
        TEXT, generating=Person))
    assert [s.is_complete for s in snaps].count(True) == 1 and snaps[-1].is_complete
    assert snaps[-1].content == whole.content
    partial = [s.content for s in snaps[:-1]]
    assert len(partial) > 3 and all(isinstance(p, dict) for p in partial)
    for earlier, later in zip(partial, partial[1:]):  # a field, once there, only grows
        for key, value in earlier.items():
            assert key in later
            if isinstance(value, str):
                assert later[key].startswith(value)
    text = list(afm.LanguageModelSession(model).stream_response("Say hello."))
    assert text[-1].is_complete and all(text[-1].content.startswith(s.content) for s in text[:-1])


def test_tools_run_on_other_threads_with_typed_arguments(model):
    calls = []

    @afm.tool(description="Current weather in a city")
    def get_weather(city: str, unit: Unit = Unit.CELSIUS) -> dict:
        calls.append((city, unit, threading.get_ident()))
        return {"city": city, "temperature": 18, "unit": unit.value}

    session = afm.LanguageModelSession(model, tools=[get_weather],
                                       instructions="You are a helpful assistant.")
    session.respond("What is the weather in Paris right now?")
    assert calls, session.transcript
    city, unit, thread = calls[0]
    assert isinstance(city, str) and city and isinstance(unit, Unit)
    assert thread != threading.get_ident()  # the framework calls tools on worker threads
    kinds = [e["kind"] for e in session.transcript]
    assert kinds[0] == "instructions" and "tool_calls" in kinds and "tool_output" in kinds
    assert kinds[-1] == "response"


def test_typed_errors(model):
    @afm.tool(description="Current weather in a city")
    def get_weather(city: str) -> str:
        raise ValueError("no network")

    session = afm.LanguageModelSession(model, tools=[get_weather],
                                       instructions="You are a helpful assistant.")
    with pytest.raises(afm.ToolCallError) as error:
        session.respond("What is the weather in Paris right now?")
    assert error.value.tool_name == "get_weather" and "no network" in str(error.value)
    small = afm.SystemLanguageModel(MODEL, context_size=64)
    with pytest.raises(afm.ExceededContextWindowSize):
        afm.LanguageModelSession(small).respond("word " * 200)
    with pytest.raises(afm.UnsupportedGuide):
        afm.LanguageModelSession(model).respond(
            "x", schema={"type": "object", "properties": {"a": {"type": "string"}},
                         "patternProperties": {"^b": {"type": "integer"}, "^c": {"type": "string"}},
                         "propertyNames": {"pattern": "^[abc]"}, "required": ["a"],
                         "not": {"multipleOf": 2}})
    missing = afm.SystemLanguageModel("no-such-model.gguf")
    assert not missing.is_available and "no-such-model.gguf" in missing.unavailable_reason
    with pytest.raises(afm.Unavailable):
        afm.LanguageModelSession(missing).respond("hi")
    with pytest.raises(TypeError):
        afm.LanguageModelSession(model).respond("x", generating=Person, schema=SCHEMA)
    assert issubclass(afm.Refusal, afm.GenerationError)


def test_prewarm_and_options(model):
    session = afm.LanguageModelSession(model, instructions=EXTRACT)
    session.prewarm()
    first = session.respond(TEXT, generating=Person)
    assert first.usage.prefilled_tokens < first.usage.prompt_tokens  # the instructions were cached
    opts = afm.GenerationOptions(sampling="top_p", top_p=0.9, seed=7, temperature=0.8, max_tokens=8)
    a = afm.LanguageModelSession(model).respond("Tell me a story.", options=opts)
    b = afm.LanguageModelSession(model).respond("Tell me a story.", options=opts)
    assert a.content == b.content and a.usage.response_tokens <= 8
    with pytest.raises(ValueError):
        afm.GenerationOptions(sampling="beam").native()


def test_adapter_matches_the_cli_and_refuses_another_base(model, tmp_path):
    adapter = tmp_path / "a.gguf"
    subprocess.run([AFM, "adapter", "random", "--base", MODEL, "--out", str(adapter), "--rank", "8",
                    "--seed", "3", "--std", "0.05"], check=True, capture_output=True)
    prompt, system = "What is 12 + 7?", "You are a helpful assistant."
    opts = afm.GenerationOptions(max_tokens=24)

    def answer(m):
        return afm.LanguageModelSession(m, instructions=system).respond(prompt, options=opts).content

    adapted = model.with_adapter(afm.SystemLanguageModel.Adapter(adapter))
    assert adapted.is_available, adapted.unavailable_reason
    got = answer(adapted)
    cmd = [AFM, "respond", "-m", MODEL, "-p", prompt, "--system", system, "--json", "-n", "24",
           "--adapter", str(adapter)]
    want = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    assert got == want["text"]
    base = answer(model)
    assert got != base  # the adapter changes the answer (a check that it ran at all)
    off = afm.SystemLanguageModel(MODEL, adapter=afm.SystemLanguageModel.Adapter(adapter, scale=0))
    assert answer(off) == base
    # An adapter made for another base (the shipped draft model) makes the model unavailable.
    other = tmp_path / "other.gguf"
    subprocess.run([AFM, "adapter", "random", "--base", "models/afm-device-21m-draft.gguf",
                    "--out", str(other), "--rank", "4"], check=True, capture_output=True)
    wrong = model.with_adapter(afm.SystemLanguageModel.Adapter(other))
    assert not wrong.is_available and "other.gguf" in wrong.unavailable_reason
    with pytest.raises(afm.Unavailable):
        afm.LanguageModelSession(wrong).respond(prompt)

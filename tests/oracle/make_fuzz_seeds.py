"""Regenerates the seed corpora of three fuzz targets (fuzz/CMakeLists.txt maps them):

  tests/data/server/fuzz_corpus/        chat-completions request bodies (openai_request_fuzz)
  tests/data/partial_json/fuzz_corpus/  JSON texts and prefixes of them (partial_json_fuzz)
  tests/data/shard/fuzz_corpus/         token shards and a meta.json (shard_reader_fuzz)

The request bodies are serialized by the official `openai` client itself (its request options,
as it would send them), so the seeds use the field shapes real clients produce; the shards
follow src/data/shard_format.h. Run from the repository root:
    .venv/bin/python tests/oracle/make_fuzz_seeds.py
"""
import json
import os
import struct

import httpx2 as httpx
import openai

MODEL = "afm-device-21m"
PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age"],
          "properties": {"name": {"type": "string", "maxLength": 20, "pattern": "^[A-Z][a-z]+$"},
                         "age": {"type": "integer", "minimum": 0, "maximum": 130},
                         "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                         "pet": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/pet"}]}},
          "$defs": {"pet": {"type": "object", "properties": {"kind": {"enum": ["cat", "dog"]}}}}}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
                                           "parameters": WEATHER, "strict": True}},
         {"type": "function", "function": {"name": "get_time"}}]
CALL = {"id": "call_0", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
REQUESTS = {
    "plain": dict(messages=[{"role": "user", "content": "Hi"}]),
    "sampling": dict(messages=[{"role": "system", "content": "Be brief."},
                               {"role": "user", "content": "Name a color."}],
                     temperature=0.7, top_p=0.9, seed=3, max_tokens=16, max_completion_tokens=8,
                     presence_penalty=0.5, frequency_penalty=-0.5, stop=["\n", "END"],
                     user="u", metadata={"k": "v"}, store=False),
    "stream": dict(messages=[{"role": "developer", "content": "x"},
                             {"role": "user", "content": [{"type": "text", "text": "a"},
                                                          {"type": "text", "text": "b"}]}],
                   stream=True, stream_options={"include_usage": True}),
    "json_object": dict(messages=[{"role": "user", "content": "JSON"}],
                        response_format={"type": "json_object"}),
    "json_schema": dict(messages=[{"role": "user", "content": "A person"}],
                        response_format={"type": "json_schema", "json_schema": {
                            "name": "person", "strict": True, "schema": PERSON}}),
    "tools": dict(messages=[{"role": "user", "content": "Weather?"}], tools=TOOLS,
                  tool_choice="required", parallel_tool_calls=False),
    "tool_named": dict(messages=[{"role": "user", "content": "Weather?"}], tools=TOOLS,
                       tool_choice={"type": "function", "function": {"name": "get_weather"}}),
    "tool_result": dict(messages=[{"role": "user", "content": "Weather?"},
                                  {"role": "assistant", "content": None, "tool_calls": [CALL]},
                                  {"role": "tool", "tool_call_id": "call_0", "content": "sunny"}],
                        tools=TOOLS, tool_choice="auto"),
    "unsupported": dict(messages=[{"role": "user", "content": "hi"}], n=2, logprobs=True),
}


def request_body(kwargs):
    """The body the openai client sends for these arguments (captured, never sent)."""
    captured = {}

    def handler(request):
        captured["body"] = request.content
        return httpx.Response(400, json={"error": {"message": "captured", "type": "x"}})

    client = openai.OpenAI(base_url="http://seed.invalid/v1", api_key="k", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    try:
        client.chat.completions.create(model=MODEL, **kwargs)
    except openai.BadRequestError:
        pass
    return captured["body"]


def fresh(path):
    """The corpus folder; files this script does not write (regression inputs) are kept."""
    os.makedirs(path, exist_ok=True)
    return path


def write(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def server_seeds():
    out = fresh("tests/data/server/fuzz_corpus")
    for name, kwargs in REQUESTS.items():
        write(f"{out}/{name}.json", request_body(kwargs))


PARTIAL = [
    '{"name": "Ana", "age": 34, "tags": ["a", "b"], "pet": null, "ok": true, "x": false}',
    '[1, -2.5e-3, 0, 1E+10, "\\u00e9\\ud83d\\ude00\\n\\"", {"a": {"b": [[]]}}]',
    '"caf\u00e9 \\t \\/ \\\\"',
    '  {"k" : [ 12 , 3.25 ] }  ',
    '-0.0',
]


def partial_json_seeds():
    out = fresh("tests/data/partial_json/fuzz_corpus")
    for i, text in enumerate(PARTIAL):
        json.loads(text)  # every whole seed is valid JSON
        write(f"{out}/whole-{i}.json", text)
        write(f"{out}/prefix-{i}.json", text[: len(text) * 2 // 3])


def shard(token_bytes, vocab_size, tokens):
    fmt = "<H" if token_bytes == 2 else "<I"
    head = b"AFMTOK01" + struct.pack("<IIQII", 1, token_bytes, len(tokens), vocab_size, 0)
    return head + b"".join(struct.pack(fmt, t) for t in tokens)


def shard_seeds():
    out = fresh("tests/data/shard/fuzz_corpus")
    write(f"{out}/small-u16.bin", shard(2, 300, [1, 17, 299, 0, 5, 2]))
    write(f"{out}/small-u32.bin", shard(4, 100000, [99999, 3, 70000, 2]))
    meta = {"format": "afm-shards", "version": 1, "tokenizer_sha256": "0" * 64,
            "vocab_size": 300, "eos_id": 2, "token_bytes": 2, "seed": 1, "val_fraction": 0.1,
            "train": {"shards": ["train-00000.bin"], "tokens": 6, "documents": 2},
            "val": {"shards": [], "tokens": 0, "documents": 0},
            "inputs": [{"file": "a.txt", "bytes": 10, "documents": 2}]}
    write(f"{out}/meta.json", json.dumps(meta, indent=1))


if __name__ == "__main__":
    server_seeds()
    partial_json_seeds()
    shard_seeds()

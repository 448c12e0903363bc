"""`afm serve` driven by the official openai Python client, and by raw HTTP where a client
would refuse to send the request: plain and streamed completions (greedy stream == greedy
whole), json_schema (validated with jsonschema), tools (required / named / none, arguments
valid for the tool's schema, a tool-result turn), errors, prefix reuse, concurrency, client
disconnects, auth, clean shutdown. Uses the shipped model. AFM_BIN is set by CTest.
"""
import concurrent.futures
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import jsonschema
import openai

AFM = os.environ.get("AFM_BIN", "build/afm")
MODEL = "models/afm-device-21m.gguf"
MODEL_ID = "afm-device-21m"
KEY = "sk-test-afm"
MAX_BODY = 65536


class Server:
    """`afm serve` on a free port; stderr is collected so the test can read the request log."""

    def __init__(self, *extra, model=MODEL):
        self.proc = subprocess.Popen(
            [AFM, "serve", "-m", model, "--port", "0", "--slots", "2", "-t", "2",
             "--max-body", str(MAX_BODY), *extra],
            stderr=subprocess.PIPE, text=True, errors="replace")
        self.lines = []
        ready = threading.Event()

        def drain():
            for line in self.proc.stderr:
                self.lines.append(line)
                m = re.match(r"listening on http://([\d.]+):(\d+)", line)
                if m:
                    self.host, self.port = m.group(1), int(m.group(2))
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=drain, daemon=True)
        self.reader.start()
        assert ready.wait(120) and self.proc.poll() is None, "".join(self.lines)
        assert self.host == "127.0.0.1"  # loopback unless told otherwise
        self.url = f"http://{self.host}:{self.port}"

    def raw(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection(self.host, self.port, timeout=120)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        self.reader.join(10)
        return code


def ask(text):
    return [{"role": "user", "content": text}]


def error_body(data):
    e = json.loads(data)["error"]
    assert set(e) == {"message", "type", "param", "code"}, e
    return e


def test_health_and_models(s, client):
    status, data = s.raw("GET", "/health")
    assert status == 200 and json.loads(data)["status"] == "ok"
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL_ID]


def test_plain_and_stream(s, client):
    kw = dict(model=MODEL_ID, messages=ask("Name three colors."), temperature=0, max_tokens=32)
    whole = client.chat.completions.create(**kw)
    assert whole.id.startswith("chatcmpl-") and whole.object == "chat.completion"
    assert whole.model == MODEL_ID
    choice = whole.choices[0]
    assert isinstance(choice.message.content, str) and choice.message.role == "assistant"
    assert choice.finish_reason in ("stop", "length")
    assert whole.usage.prompt_tokens > 0 and whole.usage.completion_tokens > 0
    assert whole.usage.completion_tokens <= 32
    chunks = list(client.chat.completions.create(
        **kw, stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == choice.message.content  # greedy: the stream is the same answer
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [choice.finish_reason]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    # max_completion_tokens is the newer name of max_tokens.
    short = client.chat.completions.create(model=MODEL_ID, messages=ask("Tell me a long story."),
                                           temperature=0, max_completion_tokens=3)
    assert short.usage.completion_tokens <= 3
    # A seed makes sampling at temperature > 0 repeatable.
    a, b = (client.chat.completions.create(model=MODEL_ID, messages=ask("Say something."),
                                           temperature=1.0, top_p=0.9, seed=11, max_tokens=16)
            for _ in range(2))
    assert a.choices[0].message.content == b.choices[0].message.content


def test_logprobs(s, client):
    r = client.chat.completions.create(model=MODEL_ID, messages=ask("What is 12 + 7?"),
                                       temperature=0, max_tokens=12, logprobs=True, top_logprobs=3)
    content = r.choices[0].logprobs.content
    assert content and len(content) <= r.usage.completion_tokens
    text = b"".join(bytes(t.bytes) for t in content).decode("utf-8")
    assert text == r.choices[0].message.content  # token by token, the whole answer
    for t in content:
        assert t.logprob <= 0 and len(t.top_logprobs) == 3
        assert t.top_logprobs[0].token == t.token  # greedy picks the most likely token
    # Streamed: each content chunk carries its tokens' entries; together they are the same.
    chunks = list(client.chat.completions.create(
        model=MODEL_ID, messages=ask("What is 12 + 7?"), temperature=0, max_tokens=12,
        logprobs=True, top_logprobs=3, stream=True))
    streamed = [t for c in chunks if c.choices and c.choices[0].logprobs
                for t in c.choices[0].logprobs.content]
    assert [(t.token, t.bytes, t.logprob) for t in streamed] == \
        [(t.token, t.bytes, t.logprob) for t in content]
    plain = client.chat.completions.create(model=MODEL_ID, messages=ask("Hi"), max_tokens=4)
    assert plain.choices[0].logprobs is None
    try:
        client.chat.completions.create(model=MODEL_ID, messages=ask("Hi"), top_logprobs=2)
        raise AssertionError("top_logprobs without logprobs was accepted")
    except openai.BadRequestError as e:
        assert e.body["param"] == "top_logprobs"


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "city": {"type": "string", "enum": ["Paris", "Rome", "Oslo"]},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}


def test_json_schema(s, client):
    for stream in (False, True):
        kw = dict(model=MODEL_ID, temperature=0, max_tokens=200,
                  messages=ask("Describe a person as JSON."),
                  response_format={"type": "json_schema",
                                   "json_schema": {"name": "person", "strict": True, "schema": PERSON}})
        if stream:
            text = "".join(c.choices[0].delta.content or ""
                           for c in client.chat.completions.create(**kw, stream=True) if c.choices)
        else:
            r = client.chat.completions.create(**kw)
            assert r.choices[0].finish_reason == "stop", r
            text = r.choices[0].message.content
        jsonschema.validate(json.loads(text), PERSON)


WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30}},
           "required": ["city"], "additionalProperties": False}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
                                      "parameters": WEATHER}},
    {"type": "function", "function": {"name": "get_time", "description": "The current time"}},
]
SCHEMAS = {"get_weather": WEATHER, "get_time": {"type": "object", "maxProperties": 0}}


def check_calls(message, names):
    assert message.tool_calls, message
    for call in message.tool_calls:
        assert call.type == "function" and call.id and call.function.name in names, call
        jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])


def test_tools(s, client):
    kw = dict(model=MODEL_ID, temperature=0, max_tokens=120, tools=TOOLS,
              messages=ask("What is the weather in Paris?"))
    r = client.chat.completions.create(**kw, tool_choice="required")
    assert r.choices[0].finish_reason == "tool_calls"
    check_calls(r.choices[0].message, {"get_weather", "get_time"})
    named = client.chat.completions.create(
        **kw, tool_choice={"type": "function", "function": {"name": "get_weather"}},
        parallel_tool_calls=False)
    check_calls(named.choices[0].message, {"get_weather"})
    assert len(named.choices[0].message.tool_calls) == 1
    none = client.chat.completions.create(**kw, tool_choice="none")
    assert not none.choices[0].message.tool_calls and isinstance(none.choices[0].message.content, str)
    # Streamed tool calls arrive as tool_calls deltas with an index.
    chunks = list(client.chat.completions.create(**kw, tool_choice="required", stream=True))
    deltas = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert deltas and all(d.index is not None and d.function.name for d in deltas)
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    # The tool's result goes back as a tool message naming the call id.
    call = named.choices[0].message.tool_calls[0]
    follow = client.chat.completions.create(
        model=MODEL_ID, temperature=0, max_tokens=24, tools=TOOLS,
        messages=kw["messages"] + [
            {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
            {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"}])
    assert follow.choices[0].finish_reason in ("stop", "length", "tool_calls")


def test_errors(s, client):
    try:
        client.chat.completions.create(model="gpt-4o", messages=ask("hi"))
        assert False
    except openai.NotFoundError as e:
        assert e.status_code == 404 and e.code == "model_not_found", e
    bad_schema = {"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": True}}}
    try:
        client.chat.completions.create(
            model=MODEL_ID, messages=ask("hi"),
            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": bad_schema}})
        assert False
    except openai.BadRequestError as e:
        assert e.status_code == 400 and "uniqueItems" in e.message, e.message
    try:
        client.chat.completions.create(model=MODEL_ID, messages=ask("hi"), temperature=5)
        assert False
    except openai.BadRequestError as e:
        assert e.param == "temperature" and "[0, 2]" in e.message, e
    try:
        client.chat.completions.create(model=MODEL_ID, messages=ask("hi"), n=2)
        assert False
    except openai.BadRequestError as e:
        assert e.param == "n", e
    # Raw HTTP for what the client would not send.
    auth = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    status, data = s.raw("POST", "/v1/chat/completions", b'{"model": ', auth)
    assert status == 400 and "parse the JSON" in error_body(data)["message"]
    body = json.dumps({"model": MODEL_ID, "messages": ask("x" * MAX_BODY)})
    status, data = s.raw("POST", "/v1/chat/completions", body, auth)
    assert status == 413 and error_body(data)["code"] == "request_too_large"
    body = json.dumps({"model": MODEL_ID, "messages": [{"role": "user", "content": 5}]})
    status, data = s.raw("POST", "/v1/chat/completions", body, auth)
    assert status == 400 and error_body(data)["param"] == "messages[0].content"
    body = json.dumps({"model": MODEL_ID, "messages": ask("hi"), "max_tokens": "ten"})
    status, data = s.raw("POST", "/v1/chat/completions", body, auth)
    assert status == 400 and error_body(data)["code"] == "invalid_type"
    status, data = s.raw("GET", "/v1/nope", None, auth)
    assert status == 404 and error_body(data)


def test_auth(s):
    c = openai.OpenAI(base_url=s.url + "/v1", api_key="wrong-key", max_retries=0)
    try:
        c.models.list()
        assert False
    except openai.AuthenticationError as e:
        assert e.status_code == 401 and e.code == "invalid_api_key"
    status, data = s.raw("POST", "/v1/chat/completions", json.dumps({"model": MODEL_ID, "messages": ask("hi")}))
    assert status == 401 and error_body(data)["code"] == "invalid_api_key"


def test_prefix_reuse(s, client):
    messages = [{"role": "system", "content": "You are a helpful assistant. " * 8}] + ask("Hello!")
    first = client.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0, max_tokens=16)
    messages += [{"role": "assistant", "content": first.choices[0].message.content}] + ask("And then?")
    second = client.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0, max_tokens=16)
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert cached > first.usage.prompt_tokens // 2, (cached, first.usage, second.usage)


def test_concurrent(s, client):
    prompts = ["Count to five.", "Name a fruit."]
    alone = [client.chat.completions.create(model=MODEL_ID, messages=ask(p), temperature=0,
                                            max_tokens=24).choices[0].message.content for p in prompts]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        together = list(pool.map(
            lambda p: client.chat.completions.create(model=MODEL_ID, messages=ask(p), temperature=0,
                                                     max_tokens=24).choices[0].message.content,
            prompts * 2))
    assert together == alone * 2


def test_disconnect(s, client):
    for stream in (True, False):
        # A schema that forces a long answer: the generation outlives the client.
        essay = {"type": "object", "properties": {"essay": {"type": "string", "minLength": 4000}},
                 "required": ["essay"]}
        body = json.dumps({"model": MODEL_ID, "messages": ask("Write a very long essay."),
                           "temperature": 1.0, "stream": stream,
                           "response_format": {"type": "json_schema",
                                               "json_schema": {"name": "essay", "schema": essay}}})
        sock = socket.create_connection((s.host, s.port))
        sock.sendall((f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode())
        if stream:
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        else:
            time.sleep(0.5)
        sock.close()
        deadline = time.time() + 30
        while time.time() < deadline and sum("client disconnected" in line for line in s.lines) < (1 if stream else 2):
            time.sleep(0.1)
    assert sum("client disconnected" in line for line in s.lines) >= 2, "".join(s.lines[-10:])
    # The slots are free again: a request completes promptly.
    t0 = time.time()
    client.chat.completions.create(model=MODEL_ID, messages=ask("hi"), temperature=0, max_tokens=4)
    assert time.time() - t0 < 30


def test_help():
    r = subprocess.run([AFM, "serve", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--api-key" in r.stdout and "--max-body" in r.stdout


def main():
    test_help()
    s = Server("--api-key", KEY)
    try:
        client = openai.OpenAI(base_url=s.url + "/v1", api_key=KEY, max_retries=0, timeout=300)
        test_health_and_models(s, client)
        test_plain_and_stream(s, client)
        test_logprobs(s, client)
        test_json_schema(s, client)
        test_tools(s, client)
        test_errors(s, client)
        test_auth(s)
        test_prefix_reuse(s, client)
        test_concurrent(s, client)
        test_disconnect(s, client)
    finally:
        code = s.stop()
    assert code == 0, "".join(s.lines[-20:])
    assert any("POST /v1/chat/completions 200" in line for line in s.lines)  # one log line per request
    # The API key may also come from the environment.
    os.environ["AFM_API_KEY"] = "from-env"
    s = Server()
    try:
        assert openai.OpenAI(base_url=s.url + "/v1", api_key="from-env").models.list().data
    finally:
        assert s.stop() == 0


if __name__ == "__main__":
    main()

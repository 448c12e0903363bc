"""Continuous batching in `afm serve`, driven by the official openai client: 8 requests at
once (plain text, json_schema, forced tool calls, seeded sampling) share forward passes and get
exactly the answers each gets alone; /metrics shows the batches; a client that disconnects in
the middle of a batch leaves the others' answers unchanged; --no-batching answers the same, and
so does a batching server that speculates (prompt lookup and the shipped draft model).
Uses the shipped model. AFM_BIN is set by CTest.
"""
import concurrent.futures
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
PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age", "city"],
          "properties": {"name": {"type": "string", "maxLength": 40},
                         "age": {"type": "integer", "minimum": 0, "maximum": 150},
                         "city": {"type": "string", "maxLength": 40}}}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30}},
                   "required": ["city"], "additionalProperties": False}}}


class Server:
    def __init__(self, *extra):
        self.proc = subprocess.Popen([AFM, "serve", "-m", MODEL, "--port", "0", "-t", "2", *extra],
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

        threading.Thread(target=drain, daemon=True).start()
        assert ready.wait(120) and self.proc.poll() is None, "".join(self.lines)
        self.client = openai.OpenAI(base_url=f"http://{self.host}:{self.port}/v1", api_key="x",
                                    max_retries=0, timeout=300)
        self.model_id = self.client.models.list().data[0].id

    def metrics(self):
        import urllib.request
        text = urllib.request.urlopen(f"http://{self.host}:{self.port}/metrics").read().decode()
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(afm_[a-z_]+) ([0-9.e+]+)$", text, re.M)}

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(60) == 0, "".join(self.lines[-20:])


def requests():
    """Eight different requests: answers long enough to overlap in the batch."""
    def chat(text, **kw):
        return {"messages": [{"role": "user", "content": text}], "temperature": 0, "max_tokens": 48, **kw}
    return [
        chat("Tell me about your day."),
        chat("What is 24 + 18?"),
        chat("Extract: Ana Lima, 34, lives in Lisbon.", max_tokens=80,
             response_format={"type": "json_schema",
                              "json_schema": {"name": "person", "strict": True, "schema": PERSON}}),
        chat("What's the weather in Oslo?", tools=[WEATHER], tool_choice="required"),
        chat("Name three colors."),
        chat("Say something.", temperature=1.0, seed=5),
        chat("Extract: Bo Chen, 51, from Taipei.", max_tokens=80,
             response_format={"type": "json_schema",
                              "json_schema": {"name": "person", "strict": True, "schema": PERSON}}),
        chat("Is it raining in Lima?", tools=[WEATHER], tool_choice="required"),
    ]


def answer(server, request):
    r = server.client.chat.completions.create(model=server.model_id, **request)
    m = r.choices[0].message
    calls = [(c.function.name, c.function.arguments) for c in m.tool_calls or []]
    return m.content, calls, r.choices[0].finish_reason, r.usage.completion_tokens


def check_valid(request, result):
    content, calls, _, _ = result
    if "response_format" in request:
        jsonschema.validate(json.loads(content), PERSON)
    if "tools" in request:
        assert calls and all(name == "get_weather" for name, _ in calls), result


def test_batched_equals_alone(server):
    reqs = requests()
    alone = [answer(server, r) for r in reqs]
    for r, a in zip(reqs, alone):
        check_valid(r, a)
    for _ in range(2):
        with concurrent.futures.ThreadPoolExecutor(len(reqs)) as pool:
            together = list(pool.map(lambda r: answer(server, r), reqs))
        assert together == alone, (together, alone)
    m = server.metrics()
    assert m["afm_batch_size_max"] >= 4, m  # they did share passes
    assert m["afm_batch_sequences_total"] > m["afm_batch_steps_total"], m
    assert m["afm_chat_requests_total"] == 3 * len(reqs), m
    assert m["afm_prompt_tokens_cached_total"] > 0, m  # the repeats reused their prompts
    assert m["afm_requests_running"] == 0 and m["afm_requests_queued"] == 0, m
    return alone


def test_disconnect_mid_batch(server, alone):
    """A streamed request whose client goes away while others run: theirs are unchanged."""
    reqs = requests()
    # A schema that makes the answer long whatever the (unseeded) sample: the client is gone
    # well before the request could end by itself.
    long_answer = {"type": "json_schema", "json_schema": {"name": "numbers", "schema": {
        "type": "object", "properties": {"n": {"type": "array", "items": {"type": "integer"},
                                               "minItems": 200}},
        "required": ["n"], "additionalProperties": False}}}
    body = json.dumps({"model": server.model_id, "messages": [{"role": "user", "content": "Go on."}],
                       "temperature": 1.0, "max_tokens": 400, "stream": True,
                       "response_format": long_answer})
    sock = socket.create_connection((server.host, server.port))
    sock.sendall((f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(body)}\r\n\r\n{body}").encode())
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    with concurrent.futures.ThreadPoolExecutor(len(reqs)) as pool:
        futures = [pool.submit(answer, server, r) for r in reqs]
        time.sleep(0.05)
        sock.close()
        assert [f.result() for f in futures] == alone
    deadline = time.time() + 30
    while time.time() < deadline and not any("client disconnected" in l for l in server.lines):
        time.sleep(0.1)
    assert any("client disconnected" in l for l in server.lines), "".join(server.lines[-10:])


def main():
    server = Server("--slots", "8")
    try:
        assert any("8 slot(s) batched on 2 thread(s)" in l for l in server.lines), server.lines
        alone = test_batched_equals_alone(server)
        test_disconnect_mid_batch(server, alone)
    finally:
        server.stop()
    plain = Server("--slots", "2", "--no-batching")
    try:
        assert any("2 slot(s) x 2 thread(s)" in l for l in plain.lines), plain.lines
        assert [answer(plain, r) for r in requests()] == alone
        assert plain.metrics()["afm_batch_steps_total"] == 0
    finally:
        plain.stop()
    # Speculative decoding under batching: verification passes and the draft model's own batch
    # engine beside seven other requests change no answer.
    spec = Server("--slots", "8", "--lookup", "3", "--model-draft", "models/afm-device-21m-draft.gguf")
    try:
        reqs = requests()
        with concurrent.futures.ThreadPoolExecutor(len(reqs)) as pool:
            assert list(pool.map(lambda r: answer(spec, r), reqs)) == alone
        m = spec.metrics()
        assert m["afm_speculative_passes_total"] > 0 and m["afm_batch_size_max"] >= 2, m
    finally:
        spec.stop()


if __name__ == "__main__":
    main()

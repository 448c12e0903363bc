"""Soak: `afm serve` with the shipped model under a thousand mixed requests, 32 at a time.

The mix: plain, streamed, json_schema and tool-call completions (the official openai client);
malformed bodies (bad JSON, wrong types), bodies over --max-body, wrong API keys, unknown models
and URLs (raw HTTP); huge and deep schemas in response_format and in tools[].function.parameters
(prefixItems of 20,000 `{}`, 20,000 properties, nesting 5,000 deep as JSON and as a $ref chain,
a 10,000-value enum, 100 KB patterns; each half also sends two 20,000-property schemas with
names never seen before; all of these once per 500 requests); clients that disconnect mid-stream or while waiting.
max_tokens stays small, so the load is parsing and guidance rather than decoding.

Asserts: every answer is 200 or the documented 4xx for its kind (a 500, a dropped connection or
a broken stream fails), the server is alive with /health 200 at the end, its resident memory at
rest besides the bounded caches /metrics reports (RSS minus grammar, mask and loop-index cache
bytes) grows by at most 10% from the end of the first half (the warm-up) to the end of the
second, a second `afm serve` on the
same port fails with "address already in use", and SIGTERM stops it with exit 0. When the
server dies, the requests in flight are replayed one at a time on a fresh server to name the
one that kills it.

    .venv/bin/python tests/server/soak_test.py [--requests 1000] [--concurrency 32]
        [--skip KIND,...] [--report]
bench/soak.py runs the same with 10,000 requests and prints the report.
"""
import argparse
import collections
import concurrent.futures
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import openai

AFM = os.environ.get("AFM_BIN", "build/afm")
MODEL = "models/afm-device-21m.gguf"
MODEL_ID = "afm-device-21m"
KEY = "sk-soak"
MAX_BODY = 2 << 20
MAX_TOKENS = 12
# Sampling seeds drawn from a small set: every (prompt, temperature, seed) is met in the first
# half, so the second half reaches no new parse states. The server's token-mask caches grow
# with new states until their own bounds (32 MiB of masks per grammar); with a thousand fresh
# seeds that filling, not a leak, was ~14 MB of the second half's RSS and failed the 10% check.
SEEDS = 8
RSS_GROWTH_LIMIT = 0.10
CLIENT_TIMEOUT = 300


class Server:
    """`afm serve` on a free port; keeps the tail of its request log."""

    def __init__(self, http_threads=64):
        self.proc = subprocess.Popen(
            [AFM, "serve", "-m", MODEL, "--port", "0", "--slots", "2", "-t", "1",
             "--http-threads", str(http_threads), "--max-body", str(MAX_BODY), "--api-key", KEY],
            stderr=subprocess.PIPE, text=True, errors="replace")
        self.tail = collections.deque(maxlen=40)
        self.statuses = collections.Counter()  # from the request log: what the server answered
        ready = threading.Event()

        def drain():
            for line in self.proc.stderr:
                self.tail.append(line if len(line) < 400 else line[:400] + " ...\n")
                m = re.match(r"afm serve: \S+ \S+ \S+ (\d{3}) ", line)
                if m:
                    self.statuses[int(m.group(1))] += 1
                m = re.match(r"listening on http://([\d.]+):(\d+)", line)
                if m:
                    self.host, self.port = m.group(1), int(m.group(2))
                    ready.set()
            ready.set()

        threading.Thread(target=drain, daemon=True).start()
        assert ready.wait(120) and self.proc.poll() is None, "afm serve did not start:\n" + self.log()
        self.url = f"http://{self.host}:{self.port}"

    def log(self):
        return "".join(self.tail)

    def alive(self):
        return self.proc.poll() is None

    def death(self):
        rc = self.proc.poll()
        if rc is not None and rc < 0:
            return f"killed by {signal.Signals(-rc).name}"
        return f"exited with {rc}"

    def rss_kib(self):
        """VmRSS, or 0 once the process is gone."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))
        except (OSError, AttributeError):
            return 0

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


# ---------------------------------------------------------------- request bodies


def ask(text):
    return [{"role": "user", "content": text}]


PROMPTS = ["Name three colors.", "What is 2 plus 3?", "Say hello.", "Describe a cat.",
           "Write a haiku about rain.", "List two fruits."]
PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age"],
          "properties": {"name": {"type": "string", "maxLength": 20},
                         "age": {"type": "integer", "minimum": 0, "maximum": 130},
                         "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}}
WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30}},
           "required": ["city"], "additionalProperties": False}


def huge_schemas():
    """The shapes that stress the schema compiler, by name (built once: some are 500 KB)."""
    # Python's json module cannot encode this depth: the text is written out, sent raw.
    deep = '{"type": "array", "items": ' * 5000 + '{"type": "integer"}' + "}" * 5000
    defs = {f"d{i}": {"type": "array", "items": {"$ref": f"#/$defs/d{i + 1}"}} for i in range(5000)}
    defs["d5000"] = {"type": "integer"}
    words = "|".join(f"word{i}" for i in range(11000))
    return {
        "prefix_items": {"type": "array", "prefixItems": [{}] * 20000},
        "properties": {"type": "object",
                       "properties": {f"p{i}": {"type": "integer"} for i in range(20000)}},
        "deep_json": deep,  # nests deeper than the body parser's limit: a 400 before compiling
        "deep_ref": {"$ref": "#/$defs/d0", "$defs": defs},
        "enum": {"enum": [f"value-{i}" for i in range(10000)]},
        "pattern_alternation": {"type": "string", "pattern": f"^({words})$"},
        "pattern_nested": {"type": "string", "pattern": "(" * 50000 + "a" + ")" * 50000},
    }


HUGE = None  # filled by main(): the shapes are large, so they are built once


def schema_request(schema, name="s"):
    return dict(model=MODEL_ID, messages=ask("Answer with JSON."), max_tokens=MAX_TOKENS,
                response_format={"type": "json_schema", "json_schema": {"name": name, "schema": schema}})


def tool_request(parameters):
    tool = {"type": "function", "function": {"name": "f", "description": "a tool",
                                             "parameters": parameters}}
    return dict(model=MODEL_ID, messages=ask("Call the tool."), max_tokens=MAX_TOKENS,
                tools=[tool], tool_choice="required")


WRONG_TYPES = [
    {"model": MODEL_ID, "messages": "hello"},
    {"model": MODEL_ID, "messages": [{"role": "user", "content": 5}]},
    {"model": MODEL_ID, "messages": ask("hi"), "temperature": "hot"},
    {"model": MODEL_ID, "messages": ask("hi"), "max_tokens": -5},
    {"model": MODEL_ID, "messages": ask("hi"), "max_tokens": "ten"},
    {"model": MODEL_ID, "messages": ask("hi"), "stop": ["a", "b", "c", "d", "e"]},
    {"model": MODEL_ID, "messages": ask("hi"), "tools": {"type": "function"}},
    {"model": MODEL_ID, "messages": ask("hi"), "response_format": {"type": "json_schema"}},
    {"model": MODEL_ID, "messages": ask("hi"), "response_format": "json"},
    {"model": MODEL_ID, "messages": [{"role": "wizard", "content": "hi"}]},
    {"model": 7, "messages": ask("hi")},
    {"model": MODEL_ID},  # no messages ('model' alone may be left out: one model is served)
    [1, 2, 3],
]
BAD_JSON = [b"", b"not json", b'{"model": ', b'{"model": "afm-device-21m",}', b"\xff\xfe{}",
            b'{"messages": [' * 200, b"[" * 100000, b'{"a": "\\ud800"}', b"null", b"1e999999"]


# ---------------------------------------------------------------- request kinds


class Failure(Exception):
    """A request that got neither a 200 nor its documented 4xx."""


def call_openai(client, kw, stream=False):
    try:
        if not stream:
            r = client.chat.completions.create(**kw)
            if not r.choices or r.choices[0].finish_reason not in ("stop", "length", "tool_calls"):
                raise Failure(f"unexpected completion {r}")
            return 200
        finishes = [c.choices[0].finish_reason
                    for c in client.chat.completions.create(**kw, stream=True) if c.choices]
        if not finishes or finishes[-1] not in ("stop", "length", "tool_calls"):
            raise Failure(f"stream ended without a finish_reason: {finishes[-3:]}")
        return 200
    except openai.APIStatusError as e:
        return e.status_code
    except openai.APIConnectionError as e:
        raise Failure(f"connection error: {e.__cause__ or e}") from None


def raw(server, method, path, body=None, key=KEY):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    c = http.client.HTTPConnection(server.host, server.port, timeout=CLIENT_TIMEOUT)
    try:
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
    except (OSError, http.client.HTTPException) as e:
        raise Failure(f"connection dropped: {e!r}") from None
    finally:
        c.close()
    if r.status != 200:
        try:
            error = json.loads(data)["error"]
            assert {"message", "type", "param", "code"} <= set(error)
        except Exception:
            raise Failure(f"{r.status} without an OpenAI error body: {data[:200]!r}") from None
    return r.status


def disconnect(server, body, read_first):
    """Sends a request and hangs up: after the first bytes of the stream, or without reading."""
    data = json.dumps(body).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n").encode()
    try:
        with socket.create_connection((server.host, server.port), timeout=CLIENT_TIMEOUT) as sock:
            sock.sendall(head + data)
            if not read_first:
                time.sleep(0.05)
                return "closed"  # nothing read: what matters is that the server copes
            got = b""
            while b"data: " not in got:
                piece = sock.recv(4096)
                if not piece:
                    raise Failure(f"connection closed before the stream began: {got[:200]!r}")
                got += piece
            m = re.match(rb"HTTP/1\.1 (\d{3})", got)
            return int(m.group(1)) if m else 0
    except OSError as e:
        raise Failure(f"connection dropped: {e!r}") from None


def sample(rng, kind):
    """A deterministic body for `kind`: (description, function of (server, client) -> status)."""
    prompt = ask(rng.choice(PROMPTS))
    base = dict(model=MODEL_ID, messages=prompt, max_tokens=MAX_TOKENS,
                temperature=rng.choice([0, 0.7, 1.0]), seed=rng.randrange(SEEDS))
    if kind == "plain":
        return "plain", lambda s, c: call_openai(c, base)
    if kind == "stream":
        kw = dict(base, stream_options={"include_usage": True})
        return "stream", lambda s, c: call_openai(c, kw, stream=True)
    if kind == "json_schema":
        kw = dict(base, response_format={"type": "json_schema",
                                         "json_schema": {"name": "person", "strict": True,
                                                         "schema": PERSON}})
        stream = rng.random() < 0.3
        return "json_schema", lambda s, c: call_openai(c, kw, stream=stream)
    if kind == "tools":
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
        kw = dict(base, tools=tools, tool_choice=rng.choice(["auto", "required"]))
        return "tools", lambda s, c: call_openai(c, kw)
    if kind == "bad_json":
        body = rng.choice(BAD_JSON)
        return f"bad_json {body[:30]!r}", lambda s, c: raw(s, "POST", "/v1/chat/completions", body)
    if kind == "wrong_type":
        body = json.dumps(rng.choice(WRONG_TYPES))
        return f"wrong_type {body[:60]}", lambda s, c: raw(s, "POST", "/v1/chat/completions", body)
    if kind == "oversized":
        body = json.dumps(dict(base, messages=ask("x" * (MAX_BODY + rng.randrange(1, 1 << 18)))))
        return "oversized", lambda s, c: raw(s, "POST", "/v1/chat/completions", body)
    if kind == "bad_key":
        body = json.dumps(base)
        return "bad_key", lambda s, c: raw(s, "POST", "/v1/chat/completions", body,
                                           key=rng.choice(["", "sk-wrong"]))
    if kind == "unknown_model":
        return "unknown_model", lambda s, c: call_openai(c, dict(base, model="gpt-4o"))
    if kind == "unknown_url":
        return "unknown_url", lambda s, c: raw(s, "GET", "/v1/nothing/here")
    if kind == "disconnect_stream":
        body = dict(base, stream=True, max_tokens=64)
        return "disconnect_stream", lambda s, c: disconnect(s, body, read_first=True)
    if kind == "disconnect_wait":
        body = dict(base, max_tokens=64)
        return "disconnect_wait", lambda s, c: disconnect(s, body, read_first=False)
    if kind == "schema:properties_unique":  # new names each time: no cache can answer it
        tag = f"u{rng.randrange(1 << 40):x}_"
        schema = {"type": "object", "properties": {f"{tag}{i}": {"type": "integer"}
                                                   for i in range(20000)}}
        kw = schema_request(schema)
        return kind, lambda s, c: call_openai(c, kw)
    shape = kind.split(":", 1)[1]
    if shape == "deep_json":  # text, not a dict: spliced into the body by hand
        marker = "\"__DEEP__\""
        kw = schema_request("__DEEP__") if kind.startswith("schema:") else tool_request(
            {"type": "object", "properties": {"x": "__DEEP__"}, "required": ["x"]})
        body = json.dumps(kw).replace(marker, HUGE[shape])
        return kind, lambda s, c: raw(s, "POST", "/v1/chat/completions", body)
    if kind.startswith("schema:"):
        kw = schema_request(HUGE[shape])
        return kind, lambda s, c: call_openai(c, kw)
    if kind.startswith("tool:"):
        parameters = HUGE[shape] if shape == "properties" else {
            "type": "object", "properties": {"x": HUGE[shape]}, "required": ["x"]}
        if shape == "deep_ref":  # $ref pointers start at the document's root
            ref = HUGE[shape]
            parameters = {"type": "object", "properties": {"x": {"$ref": ref["$ref"]}},
                          "required": ["x"], "$defs": ref["$defs"]}
        kw = tool_request(parameters)
        return kind, lambda s, c: call_openai(c, kw)
    raise ValueError(kind)


# kind: (relative weight, statuses it may get). Huge shapes are added once per half instead.
WEIGHTS = {
    "plain": (14, {200}), "stream": (12, {200}), "json_schema": (12, {200}), "tools": (10, {200}),
    "bad_json": (8, {400}), "wrong_type": (10, {400}), "oversized": (3, {413}),
    "bad_key": (3, {401}), "unknown_model": (3, {404}), "unknown_url": (2, {404}),
    "disconnect_stream": (4, {200}), "disconnect_wait": (3, {"closed"}),
}
HUGE_SHAPES = ["prefix_items", "properties", "deep_json", "deep_ref", "enum", "pattern_alternation",
               "pattern_nested"]
HUGE_KINDS = [f"{where}:{shape}" for where in ("schema", "tool") for shape in HUGE_SHAPES]
# Distinct huge schemas, twice per half (per 500 requests): what the server keeps of them must
# stay bounded.
HUGE_KINDS += ["schema:properties_unique"] * 2


def allowed(kind):
    if kind in WEIGHTS:
        return WEIGHTS[kind][1]
    return {200, 400}  # a huge schema is served or refused with a message, never more


def plan(n, seed, skip):
    """n kinds in two halves; each half has every huge shape once per 500 requests (at least
    once), the rest drawn by weight."""
    rng = random.Random(seed)
    names = [k for k in WEIGHTS if k not in skip]
    weights = [WEIGHTS[k][0] for k in names]
    huge = [k for k in HUGE_KINDS if k not in skip and k.split(":")[1] not in skip]
    halves = []
    for size in (n // 2, n - n // 2):
        repeated = (huge * max(1, size // 500))[:size]
        kinds = repeated + rng.choices(names, weights, k=size - len(repeated))
        rng.shuffle(kinds)
        halves.append(kinds)
    return halves


# ---------------------------------------------------------------- the run


class Run:
    def __init__(self, server, client, seed):
        self.server, self.client, self.seed = server, client, seed
        self.results = []  # (kind, status, seconds)
        self.failures = []  # (description, message)
        self.lock = threading.Lock()
        self.inflight = {}
        self.dead = threading.Event()
        self.dead_inflight = None
        self.rss_every = 1 << 30  # set by main(): RSS is sampled every this many requests
        self.rss_trace = []  # (requests done, KiB)

    def one(self, index, kind):
        if self.dead.is_set():
            return
        what, fn = sample(random.Random(self.seed * 1000003 + index), kind)
        with self.lock:
            self.inflight[index] = (kind, what)
        t0 = time.perf_counter()
        try:
            status = fn(self.server, self.client)
            problem = None if status in allowed(kind) else f"status {status}"
        except Failure as e:
            status, problem = None, str(e)
        except Exception as e:  # noqa: BLE001 -- a client-side surprise is a finding too
            status, problem = None, f"{type(e).__name__}: {e}"
        seconds = time.perf_counter() - t0
        with self.lock:
            del self.inflight[index]
            self.results.append((kind, status, seconds))
            if problem:
                self.failures.append((what, problem))
            if len(self.results) % self.rss_every == 0 and self.server.rss_kib():
                self.rss_trace.append((len(self.results), self.server.rss_kib()))
        if problem and not self.server.alive():
            self.note_death()

    def note_death(self):
        with self.lock:
            if self.dead_inflight is None:
                self.dead_inflight = sorted({k for k, _ in self.inflight.values()})
        self.dead.set()

    def watch(self):
        while not self.dead.is_set() and not self.finished:
            if not self.server.alive():
                self.note_death()
            time.sleep(0.05)

    def half(self, kinds, start, concurrency):
        self.finished = False
        watcher = threading.Thread(target=self.watch, daemon=True)
        watcher.start()
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(lambda a: self.one(*a), enumerate(kinds, start)))
        self.finished = True
        watcher.join()


def find_killer(kinds, seed):
    """Replays each kind that was in flight when the server died, alone, on a fresh server."""
    for kind in kinds:
        s = Server()
        try:
            client = openai.OpenAI(base_url=s.url + "/v1", api_key=KEY, max_retries=0,
                                   timeout=CLIENT_TIMEOUT)
            what, fn = sample(random.Random(seed), kind)
            try:
                fn(s, client)
            except Failure:
                pass
            time.sleep(0.5)
            if not s.alive():
                return f"request kind '{what}' kills afm serve ({s.death()}); its log ends:\n{s.log()}"
        finally:
            s.stop()
    return "no single request killed a fresh server: " + ", ".join(kinds)


def second_server_fails(port):
    """A second `afm serve` on a port in use must exit 1 naming the address, not share it."""
    p = subprocess.Popen([AFM, "serve", "-m", MODEL, "--port", str(port)],
                         stderr=subprocess.PIPE, text=True, errors="replace")
    lines = []
    for line in p.stderr:
        lines.append(line)
        if line.startswith("listening"):
            p.kill()
            p.wait()
            raise AssertionError(f"a second afm serve also listens on port {port}: {lines}")
    rc = p.wait(60)
    errors = [line for line in lines if "error" in line]
    assert rc == 1 and len(errors) == 1, (rc, lines)
    assert "address already in use" in errors[0] and f"127.0.0.1:{port}" in errors[0], errors


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def report(run, wall, rss, caches):
    by_kind = collections.defaultdict(list)
    statuses = collections.Counter()
    for kind, status, seconds in run.results:
        by_kind[kind].append(seconds)
        statuses[status if status is not None else "failed"] += 1
    return {
        "requests": len(run.results), "wall_s": round(wall, 1),
        "requests_per_s": round(len(run.results) / wall, 1),
        "statuses": {str(k): v for k, v in sorted(statuses.items(), key=str)},
        "server_log_statuses": {str(k): v for k, v in sorted(run.server.statuses.items())},
        "latency_ms": {k: {"n": len(v), "p50": round(1000 * percentile(v, 0.5), 1),
                           "p99": round(1000 * percentile(v, 0.99), 1)}
                       for k, v in sorted(by_kind.items())},
        "rss_mib": {k: round(v / 1024, 1) for k, v in rss.items()},
        "cache_mib": {k: round(v / 1024, 1) for k, v in caches.items()},
        "rss_mib_by_requests_done": [[n, round(v / 1024, 1)] for n, v in run.rss_trace],
        "failures": len(run.failures),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--http-threads", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip", default="", help="kinds or huge shapes to leave out, comma-separated")
    ap.add_argument("--report", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    global HUGE
    HUGE = huge_schemas()
    skip = set(filter(None, args.skip.split(",")))
    halves = plan(args.requests, args.seed, skip)

    s = Server(args.http_threads)
    client = openai.OpenAI(base_url=s.url + "/v1", api_key=KEY, max_retries=0, timeout=CLIENT_TIMEOUT)
    run = Run(s, client, args.seed)
    run.rss_every = max(1, args.requests // 20)
    rss = {"start": s.rss_kib()}
    caches = {}
    t0 = time.perf_counter()
    try:
        run.half(halves[0], 0, args.concurrency)
        rss["warm"], caches["warm"] = settled_rss(s)
        if not run.dead.is_set():
            run.half(halves[1], len(halves[0]), args.concurrency)
        wall = time.perf_counter() - t0
        if run.dead.is_set() or not s.alive():
            s.proc.wait(10)
            raise AssertionError(
                f"afm serve died ({s.death()}) with these kinds in flight: {run.dead_inflight}\n"
                f"its log ends:\n{s.log()}\n" + find_killer(run.dead_inflight or [], args.seed))
        rss["end"], caches["end"] = settled_rss(s)
        status, _ = raw_get(s, "/health")
        assert status == 200, f"/health answered {status}"
        second_server_fails(s.port)
    finally:
        code = s.stop()
    result = report(run, wall, rss, caches)
    if args.report:
        print(json.dumps(result, indent=1))
    assert not run.failures, (f"{len(run.failures)} of {len(run.results)} requests failed; first ones:\n"
                              + "\n".join(f"  {w}: {p}" for w, p in run.failures[:10]))
    assert 500 not in s.statuses, f"the server log shows {s.statuses[500]} answers with status 500"
    growth = (rss["end"] - caches["end"]) / (rss["warm"] - caches["warm"]) - 1
    assert growth <= RSS_GROWTH_LIMIT, (
        f"RSS besides the bounded caches grew {100 * growth:.1f}% over the second half (limit "
        f"{100 * RSS_GROWTH_LIMIT:.0f}%): RSS {result['rss_mib']} MiB, caches "
        f"{result['cache_mib']} MiB; by requests done: {result['rss_mib_by_requests_done']}")
    assert code == 0, f"SIGTERM: exit {code}\n{s.log()}"
    return result


# The bounded caches /metrics reports (bytes): they fill with the states a workload reaches, up
# to their own bounds (grammar cache 128 MiB, 8 token-mask caches of 32 MiB of masks each), so
# their growth is not a leak; the check is on what the process holds besides them.
CACHE_METRICS = ("afm_grammar_cache_bytes", "afm_mask_cache_bytes", "afm_loop_index_bytes")


def metrics(s):
    status, body = raw_get(s, "/metrics")
    assert status == 200, f"/metrics answered {status}"
    values = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def settled_rss(s):
    """RSS at a quiet moment, after a 64 KiB body (refused as bad JSON) makes the server hand
    its free pages back: what is left is live memory, not which thread's arena held a peak.
    Returns (RSS, bytes of the bounded caches), both in KiB."""
    try:
        raw(s, "POST", "/v1/chat/completions", b"x" * (64 << 10))
    except Failure:
        pass
    time.sleep(0.2)
    values = metrics(s)
    return s.rss_kib(), sum(values[k] for k in CACHE_METRICS) / 1024


def raw_get(s, path):
    c = http.client.HTTPConnection(s.host, s.port, timeout=30)
    try:
        c.request("GET", path, headers={"Authorization": f"Bearer {KEY}"})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

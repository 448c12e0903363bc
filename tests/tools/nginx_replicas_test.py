"""Two `afm serve` replicas behind nginx with deploy/nginx/afm-replicas.conf, all on loopback,
driven by the official openai client through the proxy:
  - session affinity: every request carrying one X-Session-ID is answered by one replica
    (the X-Upstream response header), and a conversation's second turn reuses the first
    turn's KV cache (usage.prompt_tokens_details.cached_tokens);
  - distinct session ids spread over both replicas; requests without the header are placed by
    the client address, so they stay on one replica;
  - streaming through the proxy (chunks, final usage, the same text as the whole answer);
  - each replica's /metrics, scraped directly, counts the chat completions it answered;
  - a replica that stops: its sessions move to the other one, the others stay put.
Skipped, with the reason printed, when no nginx binary is installed (scripts/setup --tests installs
Debian's nginx). AFM_BIN is set by CTest.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import openai

AFM = os.environ.get("AFM_BIN", "build/afm")
SOURCE = os.environ.get("AFM_SOURCE_DIR", ".")
MODEL = os.path.join(SOURCE, "models/afm-device-21m.gguf")
MODEL_ID = "afm-device-21m"
CONF = os.path.join(SOURCE, "deploy/nginx/afm-replicas.conf")
HEADER = "X-Session-ID"
LOOPBACK = "127.0.0.1"


def find_nginx():
    # /usr/sbin is often missing from an unprivileged user's PATH.
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    return shutil.which("nginx", path=path)


def free_port():
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def stop_process(proc, sig=signal.SIGTERM, group=False):
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
        proc.wait(15)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try:
            os.killpg(proc.pid, signal.SIGKILL) if group else proc.kill()
        except ProcessLookupError:
            pass
        proc.wait(15)


class Replica:
    """`afm serve` on a free loopback port (started by start(), waited for by ready())."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [AFM, "serve", "-m", MODEL, "--host", LOOPBACK, "--port", "0", "--slots", "2",
             "-t", "1", "--http-threads", "8"],
            stderr=subprocess.PIPE, text=True, errors="replace")
        self.lines = []
        self.address = None
        self._ready = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            m = re.match(r"listening on http://([\d.]+):(\d+)", line)
            if m:
                self.address = f"{m.group(1)}:{m.group(2)}"
                self._ready.set()
        self._ready.set()

    def wait_ready(self):
        assert self._ready.wait(120) and self.proc.poll() is None, "".join(self.lines)
        assert self.address.startswith(LOOPBACK + ":"), self.address

    def metrics(self):
        host, port = self.address.split(":")
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        c.request("GET", "/metrics")
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        assert r.status == 200, text
        out = {}
        for m in re.finditer(r"^(\w+)(\{[^}]*\})? (\S+)$", text, re.M):
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
        return out


def nginx_conf(tmp, port, replicas):
    """The shipped site file with this test's replicas and port, inside a main config that keeps
    every path nginx writes in tmp (so it runs without root)."""
    site = open(CONF).read()
    server_line = re.compile(r"^([ \t]*)server \S+:\d+((?: [^;\n]*)?);[ \t]*\n", re.M)
    examples = server_line.findall(site)
    assert len(examples) >= 2, "the upstream block lost its example replicas"
    indent, params = examples[0]
    first = [True]

    def replace(_):
        if not first[0]:
            return ""
        first[0] = False
        return "".join(f"{indent}server {r.address}{params};\n" for r in replicas)

    site = server_line.sub(replace, site)
    site, n = re.subn(r"^([ \t]*)listen \S+;", rf"\g<1>listen {LOOPBACK}:{port};", site,
                      flags=re.M)
    assert n == 1, "the site file should have one listen line"
    with open(os.path.join(tmp, "afm-replicas.conf"), "w") as f:
        f.write(site)
    temp = "\n".join(f"    {kind}_temp_path {tmp}/{kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    main = f"""worker_processes 1;
error_log {tmp}/error.log notice;
events {{ worker_connections 256; }}
http {{
    log_format afm '$remote_addr "$request" $status session=$http_x_session_id upstream=$upstream_addr';
    access_log {tmp}/access.log afm;
{temp}
    include {tmp}/afm-replicas.conf;
}}
"""
    path = os.path.join(tmp, "nginx.conf")
    with open(path, "w") as f:
        f.write(main)
    return path


def start_nginx(nginx, tmp, replicas):
    """nginx in the foreground on a free loopback port; retries if the port was taken meanwhile."""
    for _ in range(3):
        port = free_port()
        conf = nginx_conf(tmp, port, replicas)
        proc = subprocess.Popen(
            [nginx, "-p", tmp + "/", "-c", conf, "-e", f"{tmp}/error.log",
             "-g", f"daemon off; pid {tmp}/nginx.pid;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.time() + 15
        while time.time() < deadline and proc.poll() is None:
            try:
                socket.create_connection((LOOPBACK, port), timeout=1).close()
                return proc, port
            except OSError:
                time.sleep(0.05)
        err = proc.stderr.read().decode(errors="replace") if proc.poll() is not None else ""
        stop_process(proc, group=True)
        log = open(f"{tmp}/error.log", errors="replace").read() if os.path.exists(
            f"{tmp}/error.log") else ""
        if "Address already in use" not in err + log:
            raise AssertionError(f"nginx did not start:\n{err}\n{log}")
    raise AssertionError("nginx found no free port in 3 tries")


def upstream(raw):
    return raw.headers.get("x-upstream")


def probe(client, session):
    """Which replica nginx sends `session` to (a cheap GET /v1/models through the proxy)."""
    headers = {HEADER: session} if session is not None else {}
    raw = client.models.with_raw_response.list(extra_headers=headers)
    raw.parse()
    return upstream(raw)


def chat(client, session, messages, max_tokens=24):
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL_ID, messages=messages, temperature=0, max_tokens=max_tokens,
        extra_headers={HEADER: session})
    return upstream(raw), raw.parse()


def test_affinity(client, replicas):
    addresses = {r.address for r in replicas}
    # Enough distinct ids to land on both replicas (bounded: 64 probes).
    placed = {}
    for i in range(64):
        session = f"conversation-{i:02d}"
        placed[session] = probe(client, session)
        assert placed[session] in addresses, placed[session]
        per = {a: [s for s, p in placed.items() if p == a] for a in addresses}
        if all(len(v) >= 2 for v in per.values()):
            break
    assert all(len(v) >= 2 for v in per.values()), f"sessions not spread: {placed}"
    for session, address in placed.items():  # the placement is stable
        assert probe(client, session) == address, session

    # Without the header, nginx hashes the client address: one replica for all of them.
    assert len({probe(client, None) for _ in range(4)}) == 1

    # Two sessions per replica, each a two-turn conversation.
    sessions = [s for v in per.values() for s in v[:2]]
    answered = {a: 0 for a in addresses}
    turns = {}
    for n, session in enumerate(sessions):
        first = [{"role": "system", "content": f"You are assistant number {n} of the team."},
                 {"role": "user", "content": f"Session {session}: name a fruit and a color."}]
        up1, r1 = chat(client, session, first)
        second = first + [{"role": "assistant", "content": r1.choices[0].message.content},
                          {"role": "user", "content": "Now name an animal."}]
        up2, r2 = chat(client, session, second)
        assert up1 == up2 == placed[session], (session, up1, up2, placed[session])
        answered[up1] += 2
        cached = r2.usage.prompt_tokens_details.cached_tokens
        # The replica's slot still holds turn one: at least its whole prompt is reused.
        assert cached >= r1.usage.prompt_tokens, (session, cached, r1.usage)
        assert r2.usage.prompt_tokens > cached, r2.usage
        turns[session] = (second, r2)
    return placed, answered, turns


def test_streaming(client, placed, answered, turns):
    # The last conversation: its replica's slot still holds its second turn.
    session, (messages, whole) = list(turns.items())[-1]
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL_ID, messages=messages, temperature=0, max_tokens=24, stream=True,
        stream_options={"include_usage": True}, extra_headers={HEADER: session})
    assert upstream(raw) == placed[session]
    assert raw.headers.get("content-type", "").startswith("text/event-stream")
    pieces, usage, finish = [], None, None
    for chunk in raw.parse():
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.content:
                pieces.append(choice.delta.content)
            finish = choice.finish_reason or finish
    answered[placed[session]] += 1
    assert len(pieces) >= 2, pieces
    assert "".join(pieces) == whole.choices[0].message.content, (pieces, whole)
    assert finish == whole.choices[0].finish_reason
    assert usage is not None and usage.completion_tokens == whole.usage.completion_tokens, usage
    assert usage.prompt_tokens_details.cached_tokens >= whole.usage.prompt_tokens - 1, usage


def test_metrics(replicas, answered):
    for r in replicas:
        m = r.metrics()
        # The five series a balancer or a dashboard reads: requests, tokens, queue, batch size,
        # cache hits.
        assert m["afm_chat_requests_total"] == answered[r.address], (r.address, m)
        assert m['afm_http_requests_total{status="200"}'] > answered[r.address], m
        assert m["afm_prompt_tokens_total"] > 0 and m["afm_completion_tokens_total"] > 0, m
        assert m["afm_requests_queued"] == 0 and m["afm_requests_running"] == 0, m
        assert m["afm_batch_sequences_total"] >= m["afm_batch_steps_total"] > 0, m
        assert m["afm_batch_size_max"] >= 1, m
        assert m["afm_prompt_tokens_cached_total"] > 0, m


def test_health(port):
    c = http.client.HTTPConnection(LOOPBACK, port, timeout=30)
    c.request("GET", "/health")
    r = c.getresponse()
    assert r.status == 200 and json.loads(r.read()) == {"status": "ok"}
    assert r.getheader("X-Upstream"), r.getheaders()
    c.close()


def test_failover(client, replicas, placed, turns):
    """One replica stops: its sessions are answered by the other, the other's stay put."""
    gone, alive = replicas
    stop_process(gone.proc)
    moved = [s for s in turns if placed[s] == gone.address]
    stayed = [s for s in turns if placed[s] == alive.address]
    for session in moved + stayed:
        up, r = chat(client, session, turns[session][0], max_tokens=4)
        assert up.split(", ")[-1] == alive.address, (session, up)
        assert r.choices[0].message.content is not None
    for session in stayed:
        assert probe(client, session) == alive.address


def main():
    nginx = find_nginx()
    if nginx is None:
        print("skipping: no nginx binary (Debian package nginx, installed by scripts/setup --tests)")
        return 0
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="afm-nginx-")
    os.chmod(tmp, 0o755)  # nginx's workers drop root privileges and still need to enter it
    replicas, proxy = [], None
    try:
        replicas = [Replica(), Replica()]
        for r in replicas:
            r.wait_ready()
        proxy, port = start_nginx(nginx, tmp, replicas)
        client = openai.OpenAI(base_url=f"http://{LOOPBACK}:{port}/v1", api_key="unused",
                               max_retries=0, timeout=60)
        test_health(port)
        placed, answered, turns = test_affinity(client, replicas)
        test_streaming(client, placed, answered, turns)
        test_metrics(replicas, answered)
        test_failover(client, replicas, placed, turns)
        assert time.time() - start < 120, "took too long"
    except BaseException:
        for name in ("error.log", "access.log"):
            p = os.path.join(tmp, name)
            if os.path.exists(p):
                sys.stderr.write(f"--- nginx {name}\n" + open(p, errors="replace").read()[-4000:])
        for r in replicas:
            sys.stderr.write(f"--- afm serve {r.address}\n" + "".join(r.lines[-20:]))
        raise
    finally:
        stop_process(proxy, signal.SIGTERM, group=True)
        for r in replicas:
            stop_process(r.proc)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

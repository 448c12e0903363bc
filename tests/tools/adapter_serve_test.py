"""`afm serve --adapter NAME=FILE` on the shipped model: /v1/models lists the base and
"BASE:NAME"; each request runs on the adapter its "model" names; one slot serves both without
mixing their KV caches (a request reuses cached tokens only from its own adapter, and the base
answers the same before and after adapter requests); a bad --adapter is a usage error (exit 2)
and an adapter for another base stops the server before it listens (exit 1). AFM_BIN is set by
CTest.
"""
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import threading

AFM = os.environ["AFM_BIN"]
MODEL = "models/afm-device-21m.gguf"


class Server:
    def __init__(self, *extra):
        self.proc = subprocess.Popen([AFM, "serve", "-m", MODEL, "--port", "0", "--slots", "1",
                                      "-t", "1", *extra],
                                     stderr=subprocess.PIPE, text=True, errors="replace")
        self.lines, ready = [], threading.Event()

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

    def call(self, method, path, body=None):
        c = http.client.HTTPConnection(self.host, self.port, timeout=120)
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = json.loads(r.read())
        c.close()
        return r.status, data

    def chat(self, model, text):
        status, data = self.call("POST", "/v1/chat/completions", {
            "model": model, "messages": [{"role": "user", "content": text}],
            "temperature": 0, "max_tokens": 12})
        assert status == 200, data
        cached = data["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
        return data["choices"][0]["message"]["content"], cached

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        self.reader.join(10)
        return code


def main():
    with tempfile.TemporaryDirectory() as tmp:
        adapter = os.path.join(tmp, "tone.gguf")
        subprocess.run([AFM, "adapter", "random", "--base", MODEL, "--out", adapter, "--rank", "8",
                        "--seed", "3", "--std", "0.2"], check=True, capture_output=True)
        r = subprocess.run([AFM, "serve", "-m", MODEL, "--adapter", "no-equals-sign"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "NAME=FILE" in r.stderr, r.stderr
        # An adapter made for other weights: the merged model is another base.
        other = os.path.join(tmp, "other.gguf")
        foreign = os.path.join(tmp, "foreign.gguf")
        subprocess.run([AFM, "adapter", "merge", "--base", MODEL, "--adapter", adapter, "--out",
                        other], check=True, capture_output=True)
        subprocess.run([AFM, "adapter", "random", "--base", other, "--out", foreign],
                       check=True, capture_output=True)
        r = subprocess.run([AFM, "serve", "-m", MODEL, "--port", "0", "--adapter",
                            "x=" + foreign], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "SHA-256" in r.stderr, r.stderr

        s = Server("--adapter", "tone=" + adapter)
        try:
            status, models = s.call("GET", "/v1/models")
            assert status == 200, models
            ids = [m["id"] for m in models["data"]]
            assert len(ids) == 2 and ids[1] == ids[0] + ":tone", ids
            base, tone = ids
            assert s.call("GET", "/v1/models/" + tone)[0] == 200
            prompt = "Name a color."
            base_answer, _ = s.chat(base, prompt)
            _, cached = s.chat(base, prompt)
            assert cached > 0, "the base request did not reuse its own cache"
            tone_answer, cached = s.chat(tone, prompt)
            assert cached == 0, f"{cached} cached tokens crossed from the base to the adapter"
            assert tone_answer != base_answer, "the adapter does not change the answer"
            # Same adapter: the slot's cache is reused (the answer may differ in its last digits:
            # q8_0 activation rounding depends on how the prompt was split into batches).
            _, cached = s.chat(tone, prompt)
            assert cached > 0, "the adapter request did not reuse its own cache"
            after, cached = s.chat(base, prompt)
            assert cached == 0 and after == base_answer, (after, cached)
            status, err = s.call("POST", "/v1/chat/completions", {
                "model": base + ":nope", "messages": [{"role": "user", "content": "x"}]})
            assert status == 404 and err["error"]["code"] == "model_not_found", err
        finally:
            assert s.stop() == 0


if __name__ == "__main__":
    main()

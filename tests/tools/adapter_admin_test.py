"""Loading and unloading adapters while `afm serve` runs (docs/server.md "Adapters"):
- without an API key the admin routes refuse (403); with one, a request without it gets 401;
- POST /v1/adapters serves BASE:NAME at once (listed in /v1/models, answered through the
  official `openai` client with the adapter's output, not the base's); a taken name is a 409;
  bad bodies, a missing file and an adapter for other weights are 400s naming the problem;
- DELETE while a streamed generation runs on the adapter: that generation finishes normally,
  the next request for the id is a 404, and the name can be loaded again (at scale 0 it then
  answers exactly as the base does).
AFM_BIN is set by CTest."""
import json
import os
import subprocess
import sys
import tempfile
import threading

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from adapter_serve_test import AFM, MODEL, Server  # noqa: E402

KEY = "admin-test-key"


class KeyedServer(Server):
    def request(self, method, path, body=None, key=KEY):
        import http.client
        c = http.client.HTTPConnection(self.host, self.port, timeout=120)
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = "Bearer " + key
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers=headers)
        r = c.getresponse()
        data = json.loads(r.read())
        c.close()
        return r.status, data


def make_adapters(tmp):
    adapter = os.path.join(tmp, "tone.gguf")
    subprocess.run([AFM, "adapter", "random", "--base", MODEL, "--out", adapter, "--rank", "8",
                    "--seed", "3", "--std", "0.2"], check=True, capture_output=True)
    other, foreign = os.path.join(tmp, "other.gguf"), os.path.join(tmp, "foreign.gguf")
    subprocess.run([AFM, "adapter", "merge", "--base", MODEL, "--adapter", adapter, "--out",
                    other], check=True, capture_output=True)
    subprocess.run([AFM, "adapter", "random", "--base", other, "--out", foreign],
                   check=True, capture_output=True)
    return adapter, foreign


def answer(client, model, prompt="Name a color."):
    r = client.chat.completions.create(model=model, temperature=0, max_tokens=12,
                                       messages=[{"role": "user", "content": prompt}])
    return r.choices[0].message.content


def main():
    with tempfile.TemporaryDirectory() as tmp:
        adapter, foreign = make_adapters(tmp)
        open_server = KeyedServer()
        try:
            status, err = open_server.request("POST", "/v1/adapters",
                                              {"name": "tone", "path": adapter}, key=None)
            assert status == 403 and err["error"]["code"] == "admin_disabled", err
            assert open_server.request("GET", "/v1/adapters", key=None)[0] == 403
        finally:
            assert open_server.stop() == 0

        s = KeyedServer("--api-key", KEY)
        try:
            assert s.request("GET", "/v1/adapters", key=None)[0] == 401
            assert s.request("POST", "/v1/adapters", {"name": "t", "path": adapter},
                             key="wrong")[0] == 401
            status, listed = s.request("GET", "/v1/adapters")
            assert status == 200 and listed["data"] == [], listed
            base = s.request("GET", "/v1/models")[1]["data"][0]["id"]
            client = openai.OpenAI(base_url=f"http://{s.host}:{s.port}/v1", api_key=KEY)
            base_answer = answer(client, base)

            status, loaded = s.request("POST", "/v1/adapters",
                                       {"name": "tone", "path": adapter, "scale": 1.0})
            assert status == 201 and loaded["id"] == base + ":tone", loaded
            assert loaded["path"] == adapter and loaded["scale"] == 1.0, loaded
            ids = [m.id for m in client.models.list().data]
            assert ids == [base, base + ":tone"], ids
            tone_answer = answer(client, base + ":tone")
            assert tone_answer != base_answer, "the loaded adapter does not change the answer"

            status, err = s.request("POST", "/v1/adapters", {"name": "tone", "path": adapter})
            assert status == 409 and err["error"]["code"] == "adapter_exists", err
            # Without 'model' a server of one model answers with it; with an adapter loaded
            # it asks which, naming both.
            status, err = s.request("POST", "/v1/chat/completions",
                                    {"messages": [{"role": "user", "content": "Hi."}], "max_tokens": 2})
            assert status == 400 and err["error"]["param"] == "model", err
            assert base + ":tone" in err["error"]["message"], err
            for body, fragment in [
                    ({"name": "a/b", "path": adapter}, "name must be"),
                    ({"name": "x"}, "path"),
                    ({"name": "x", "path": adapter, "rank": 4}, "rank"),
                    ({"name": "x", "path": adapter, "scale": 1000}, "scale"),
                    ({"name": "x", "path": os.path.join(tmp, "missing.gguf")}, "missing.gguf"),
                    ({"name": "x", "path": foreign}, "SHA-256"),
                    ([1, 2], "body")]:
                status, err = s.request("POST", "/v1/adapters", body)
                assert status == 400 and fragment in err["error"]["message"], (body, err)
            assert [m.id for m in client.models.list().data] == ids

            # Unload while a streamed generation runs on the adapter.
            stream = client.chat.completions.create(
                model=base + ":tone", temperature=0, max_tokens=300, stream=True,
                messages=[{"role": "user", "content": "Tell me a long story."}])
            chunks = iter(stream)
            next(chunks)  # the generation has started
            status, deleted = s.request("DELETE", "/v1/adapters/tone")
            assert status == 200 and deleted["deleted"] is True, deleted
            finish = [c.choices[0].finish_reason for c in chunks if c.choices]
            assert finish and finish[-1] in ("stop", "length"), finish
            try:
                answer(client, base + ":tone")
                raise AssertionError("an unloaded adapter still answers")
            except openai.NotFoundError as e:
                assert e.status_code == 404
            status, err = s.request("DELETE", "/v1/adapters/tone")
            assert status == 404 and err["error"]["code"] == "adapter_not_found", err
            assert s.request("GET", "/v1/adapters")[1]["data"] == []

            status, loaded = s.request("POST", "/v1/adapters",
                                       {"name": "tone", "path": adapter, "scale": 0})
            assert status == 201, loaded
            assert answer(client, base + ":tone") == base_answer  # scale 0: the base exactly
            assert answer(client, base) == base_answer
        finally:
            assert s.stop() == 0
    print("adapter admin: ok")


if __name__ == "__main__":
    main()

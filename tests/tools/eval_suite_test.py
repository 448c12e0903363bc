"""`afm eval` (eval/afm_eval.py through the afm binary): one run over a model gives perplexity
equal to `afm perplexity` on the same generated text, generator tasks whose items are the
generator's for the seed and whose metrics are their records' scores, and an lm-eval task; the
same tasks against a running server (--server) give the same replies; --out writes what --json
prints; bad arguments are usage errors (exit 2) naming the problem, and a missing Python an error
(exit 1). AFM_BIN is set by CTest.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "eval"))
import afm_eval  # noqa: E402
import task_eval  # noqa: E402

AFM = os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm"))
MODEL = os.path.join(ROOT, "models", "afm-device-21m.gguf")
N, SEED, LIMIT = 6, 11, 4


def afm_eval_run(*args, env=None):
    return subprocess.run([AFM, "eval", *args], capture_output=True, text=True, timeout=600,
                          env=env)


def metrics_of(result, task):
    return {m["metric"]: (m["value"], m["n"]) for m in result["tasks"][task]["metrics"]}


def check_generator_task(result, task):
    records = result["tasks"][task]["items"]
    items = task_eval.generate(task, N, SEED)
    assert [r["prompt"] for r in records] == [i["messages"][-1]["content"] for i in items]
    for r, item in zip(records, items):
        assert r["score"] == task_eval.score_item(item, r["got"]), r
    want = {m["metric"]: (m["value"], m["n"]) for m in task_eval.summarize(task, records)}
    assert metrics_of(result, task) == want


def test_model_run(tmp):
    out = os.path.join(tmp, "eval.json")
    r = afm_eval_run("-m", MODEL, "--tasks", "perplexity,arithmetic,extraction,lm_eval:afm_arithmetic",
                     "--n", str(N), "--seed", str(SEED), "--limit", str(LIMIT), "-t", "2",
                     "--json", "--items", "--out", out)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    with open(out, encoding="utf-8") as f:
        assert json.load(f) == result
    assert list(result["tasks"]) == ["perplexity", "arithmetic", "extraction",
                                     "lm_eval:afm_arithmetic"]
    # Perplexity: afm perplexity itself on the same generated text.
    text = os.path.join(tmp, "heldout.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write(afm_eval.generator_text(afm_eval.PERPLEXITY_ITEMS, SEED))
    p = json.loads(subprocess.run([AFM, "perplexity", "-m", MODEL, "-f", text, "--json", "-t", "2"],
                                  check=True, capture_output=True, text=True).stdout)
    ppl = metrics_of(result, "perplexity")
    assert ppl["perplexity"] == (round(p["perplexity"], 4), p["scored_tokens"]), (ppl, p)
    assert p["scored_tokens"] > 1000
    for task in ("arithmetic", "extraction"):
        check_generator_task(result, task)
    lm = metrics_of(result, "lm_eval:afm_arithmetic")
    assert set(lm) == {"acc", "acc_norm"} and lm["acc"][1] == LIMIT, lm
    assert 0.0 <= lm["acc"][0] <= 1.0
    # The table form names every task.
    t = afm_eval_run("-m", MODEL, "--tasks", "arithmetic", "--n", "2", "-t", "2")
    assert t.returncode == 0 and "arithmetic" in t.stdout and "accuracy" in t.stdout, t
    return result


def test_server_run(model_result):
    server = task_eval.Server(AFM, MODEL, threads=2)
    try:
        r = afm_eval_run("--server", server.url, "--tasks", "arithmetic", "--n", str(N),
                         "--seed", str(SEED), "--json", "--items")
    finally:
        server.stop()
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    check_generator_task(got, "arithmetic")
    assert ([x["got"] for x in got["tasks"]["arithmetic"]["items"]] ==
            [x["got"] for x in model_result["tasks"]["arithmetic"]["items"]])
    # A server with an API key: the key is sent with every request, the model listing included.
    proc = subprocess.Popen([AFM, "serve", "-m", MODEL, "--port", "0", "-t", "2", "--api-key", "k3y"],
                            stderr=subprocess.PIPE, text=True)
    try:
        url = next(m.group(1) for line in proc.stderr
                   if (m := re.search(r"listening on (http://\S+)", line)))
        r = afm_eval_run("--server", url, "--api-key", "k3y", "--tasks", "arithmetic", "--n", "2",
                         "--seed", str(SEED), "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["tasks"]["arithmetic"]["metrics"][0]["n"] == 2
        r = afm_eval_run("--server", url, "--api-key", "wrong", "--tasks", "arithmetic", "--n", "1")
        assert r.returncode == 1 and "did not list its model" in r.stderr, r.stderr
    finally:
        proc.terminate()
        proc.wait(30)


def test_usage_errors():
    h = afm_eval_run("--help")
    assert h.returncode == 0 and "lm_eval:NAME" in h.stdout and "perplexity" in h.stdout, h
    cases = [
        (["--tasks", "arithmetic"], "exactly one of --model and --server"),
        (["-m", MODEL, "--server", "http://127.0.0.1:9"], "exactly one of --model and --server"),
        (["-m", MODEL, "--tasks", "arithmetic,poetry"], "unknown task 'poetry'"),
        (["-m", MODEL, "--tasks", "lm_eval:nothing"], "afm_arithmetic"),
        (["--server", "http://127.0.0.1:9", "--tasks", "perplexity"], "needs --model"),
        (["-m", MODEL, "--n", "0"], "--n must be >= 1"),
        (["-m", os.path.join(ROOT, "no-such.gguf")], "no model file"),
        (["-m", MODEL, "--tasks", "arithmetic,arithmetic"], "twice"),
    ]
    for args, message in cases:
        r = afm_eval_run(*args)
        assert r.returncode == 2 and message in r.stderr, (args, r.returncode, r.stderr)
    env = dict(os.environ, AFM_PYTHON="/nonexistent/python3")
    r = afm_eval_run("--help", env=env)
    assert r.returncode == 1 and "needs Python 3" in r.stderr, r.stderr
    # A server that is not there: an error naming it, not a traceback.
    r = afm_eval_run("--server", "http://127.0.0.1:9", "--tasks", "arithmetic", "--n", "1")
    assert r.returncode == 1 and "afm eval: error" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        result = test_model_run(tmp)
        print("ok test_model_run")
        test_server_run(result)
        print("ok test_server_run")
    test_usage_errors()
    print("ok test_usage_errors")


if __name__ == "__main__":
    main()

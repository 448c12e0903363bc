"""The adapter CLI contract on the shipped model: `--help` for every adapter command; --adapter /
--adapter-scale on generate, chat, respond, bench and eval; out-of-range values are usage errors
(exit 2, one line); an adapter for another base is a runtime error (exit 1, one line naming
both hashes) before any output; `afm adapter merge` writes a file that runs like the unmerged
adapter, and leaves nothing behind when it fails. AFM_BIN is set by CTest.
"""
import json
import os
import subprocess
import tempfile

AFM = os.environ["AFM_BIN"]
MODEL = "models/afm-device-21m.gguf"


def run(*args, timeout=120):
    return subprocess.run([AFM, *args], capture_output=True, text=True, errors="replace",
                          timeout=timeout)


def ok(*args):
    r = run(*args)
    assert r.returncode == 0, (args, r.returncode, r.stderr)
    return r.stdout


def one_line_error(r, code, *needles):
    assert r.returncode == code, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def test_help():
    for cmd in (("adapter",), ("adapter", "merge"), ("adapter", "info"), ("adapter", "random")):
        assert "Usage" in ok(*cmd, "--help"), cmd
    for cmd in ("generate", "chat", "respond", "bench", "logits"):
        out = ok(cmd, "--help")
        assert "--adapter" in out and "--adapter-scale" in out, cmd


def test_usage_errors(tmp):
    adapter = os.path.join(tmp, "a.gguf")
    ok("adapter", "random", "--base", MODEL, "--out", adapter, "--rank", "4")
    m = ("generate", "-m", MODEL, "-p", "x", "--adapter", adapter)
    one_line_error(run(*m, "--adapter-scale", "nan"), 2, "--adapter-scale must be a finite number")
    one_line_error(run(*m, "--adapter-scale", "1000"), 2, "--adapter-scale must be in")
    one_line_error(run("generate", "-m", MODEL, "-p", "x", "--adapter", os.path.join(tmp, "no")),
                   2, "--adapter")
    one_line_error(run("adapter", "random", "--base", MODEL, "--out", adapter, "--rank", "0"), 2,
                   "--rank must be in")
    one_line_error(run("adapter", "merge", "--base", MODEL, "--adapter", adapter), 2, "--out")


def test_wrong_base_is_a_runtime_error(tmp):
    other = os.path.join(tmp, "other.gguf")
    adapter = os.path.join(tmp, "for-other.gguf")
    merged = os.path.join(tmp, "merged.gguf")
    # Same architecture, other weights: the merge of a random adapter changes the data section.
    first = os.path.join(tmp, "first.gguf")
    ok("adapter", "random", "--base", MODEL, "--out", first, "--rank", "2", "--targets", "attn_q")
    ok("adapter", "merge", "--base", MODEL, "--adapter", first, "--out", other)
    ok("adapter", "random", "--base", other, "--out", adapter, "--rank", "2")
    want = json.loads(ok("adapter", "info", adapter, "--json"))["base_model_sha256"]
    r = run("generate", "-m", MODEL, "-p", "x", "-n", "2", "--adapter", adapter)
    one_line_error(r, 1, want, "SHA-256")
    assert r.stdout == "", r.stdout
    r = run("adapter", "merge", "--base", MODEL, "--adapter", adapter, "--out", merged)
    one_line_error(r, 1, want)
    assert not any(n.startswith("merged.gguf") for n in os.listdir(tmp)), os.listdir(tmp)


def test_every_engine_command_runs_the_adapter(tmp):
    adapter = os.path.join(tmp, "b.gguf")
    merged = os.path.join(tmp, "b-merged.gguf")
    ok("adapter", "random", "--base", MODEL, "--out", adapter, "--rank", "8", "--seed", "3",
       "--std", "0.2")
    g = ("generate", "-m", MODEL, "-p", "Once upon a time", "-n", "12", "--temp", "0",
         "--ignore-eos", "--json", "-t", "1")
    base = json.loads(ok(*g))["tokens"]
    adapted = json.loads(ok(*g, "--adapter", adapter))["tokens"]
    assert adapted != base, "the adapter does not change the greedy tokens"
    assert json.loads(ok(*g, "--adapter", adapter, "--adapter-scale", "0"))["tokens"] == base
    ok("adapter", "merge", "--base", MODEL, "--adapter", adapter, "--out", merged, "--json")
    # The merged model is re-quantised to q8_0 (the unmerged update is not), so its logits
    # differ by the rounding: far closer to the unmerged adapter's than to the base's.
    e = ("-p", "Once upon a time", "--json", "--logits", "-t", "1")
    logits = lambda *a: json.loads(ok("logits", *a, *e))["logits"]
    unmerged, base_l = logits("-m", MODEL, "--adapter", adapter), logits("-m", MODEL)
    merged_l = logits("-m", merged)
    dist = lambda x, y: max(abs(p - q) for rx, ry in zip(x, y) for p, q in zip(rx, ry))
    assert dist(merged_l, unmerged) < 0.15 * dist(unmerged, base_l), (
        dist(merged_l, unmerged), dist(unmerged, base_l))
    ok("bench", "-m", MODEL, "-p", "8", "-n", "4", "-r", "1", "-t", "1", "--adapter", adapter)
    ok("respond", "-m", MODEL, "-p", "Hi", "-n", "4", "--temp", "0", "--adapter", adapter)
    r = subprocess.run([AFM, "chat", "-m", MODEL, "-n", "4", "--temp", "0", "--adapter", adapter],
                       input="Hi\n", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_help()
        test_usage_errors(tmp)
        test_wrong_base_is_a_runtime_error(tmp)
        test_every_engine_command_runs_the_adapter(tmp)


if __name__ == "__main__":
    main()

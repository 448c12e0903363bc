"""bench/drop_eval_names.py: a conversation whose assistant turn (content or tool-call
arguments) holds an evaluation name as a whole word is dropped, one that only mentions it in
the user turn or inside a longer word is kept; --shuffle shuffles before filtering, so a seed
gives the same order whatever is dropped; a line that is not JSON exits 2. And the generator
path it exists for: `afm data synth --spelled-names` with the default model's tokenizer writes
names that are copied from the texts, and refuses to run without --spelling-model. AFM_BIN is
set by CTest.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import task_eval  # noqa: E402

SCRIPT = os.path.join(ROOT, "bench", "drop_eval_names.py")
AFM = os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm"))
MODEL = os.path.join(ROOT, "models", "afm-device-21m.gguf")
CITY = task_eval.CITIES[0]


def conversation(answer, user="Where?", tool_arguments=None):
    assistant = {"role": "assistant", "content": answer}
    if tool_arguments is not None:
        assistant["tool_calls"] = [{"id": "c1", "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps(tool_arguments)}}]
    return json.dumps({"messages": [{"role": "user", "content": user}, assistant]})


def run(lines, *args):
    return subprocess.run([sys.executable, SCRIPT, *args], input="\n".join(lines) + "\n",
                          capture_output=True, text=True)


def test_drops_answers_with_an_evaluation_name_and_keeps_the_rest():
    lines = [
        conversation(json.dumps({"city": CITY})),                      # dropped
        conversation("", tool_arguments={"city": CITY}),               # dropped
        conversation(json.dumps({"city": CITY + "ek"})),               # kept: not a whole word
        conversation(json.dumps({"city": "Zqarbury"}), user=f"In {CITY}?"),  # kept: user turn
    ]
    r = run(lines)
    assert r.returncode == 0, r.stderr
    kept = r.stdout.splitlines()
    assert kept == lines[2:], kept
    assert "kept 2, dropped 2" in r.stderr


def test_shuffle_is_seeded_and_applied_before_filtering():
    lines = [conversation(json.dumps({"city": f"Zq{i}town"})) for i in range(20)]
    a = run(lines, "--shuffle", "5").stdout.splitlines()
    b = run(lines + [conversation(json.dumps({"city": CITY}))], "--shuffle", "5").stdout
    assert sorted(a) == sorted(lines) and a != lines
    assert a == run(lines, "--shuffle", "5").stdout.splitlines()
    assert len(b.splitlines()) == 20


def test_a_line_that_is_not_json_is_an_error():
    r = run(["not json"])
    assert r.returncode == 2
    assert "line 1: not JSON" in r.stderr


def test_spelled_names_are_copied_from_the_texts():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "s.jsonl")
        subprocess.run([AFM, "data", "synth", "--seed", "3", "--n", "200", "--tasks", "extraction",
                        "--invented-names", "100", "--spelled-names", "100", "--spelling-model",
                        MODEL, "--format", "jsonl", "--out", out], check=True, capture_output=True)
        names = 0
        for line in open(out, encoding="utf-8"):
            messages = json.loads(line)["messages"]
            answer = json.loads(messages[-1]["content"])
            for key in ("name", "city", "payer", "payee"):
                if key in answer:
                    assert answer[key] in messages[-2]["content"], (key, answer[key])
                    names += 1
        assert names > 200
        r = subprocess.run([AFM, "data", "synth", "--n", "1", "--spelled-names", "10",
                            "--out", os.path.join(tmp, "x")], capture_output=True, text=True)
        assert r.returncode != 0 and "--spelling-model" in r.stderr


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn()
    print("ok")

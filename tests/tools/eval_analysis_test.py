"""The two analyses of bench/task_eval.py results that docs/models.md quotes.

bench/first_token_groups.py: string values of the assistant's JSON answers and tool-call
arguments are counted by first token (the model's tokenizer on " " + first word), and each
evaluation field lands in the group of its value's count, dates left out. bench/
task_eval_compare.py: discordant items are counted per task over pooled seeds, the McNemar
p-value is the exact binomial one, and files of different items are refused. AFM_BIN is set by
CTest.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
AFM = os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm"))
MODEL = os.path.join(ROOT, "models", "afm-device-21m.gguf")


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(BENCH, script), *args],
                          capture_output=True, text=True, env={**os.environ, "AFM_BIN": AFM})


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def answer(content=None, arguments=None):
    message = {"role": "assistant", "content": json.dumps(content) if content else None}
    if arguments is not None:
        message["tool_calls"] = [{"id": "c", "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps(arguments)}}]
    return json.dumps({"messages": [{"role": "user", "content": "x"}, message]})


def results(items):
    return json.dumps({"tasks": {"extraction": {"metrics": [], "items": items}}})


def field_item(expected, right):
    return {"prompt": "p", "expected": expected,
            "score": {"fields": dict(zip(expected, right)), "record": all(right)}}


def test_first_token_groups():
    with tempfile.TemporaryDirectory() as tmp:
        # "Oslo" begins 120 values (one of them a tool argument), "Nairobi" 12; an answer that
        # is not JSON and the user's words count for nothing.
        lines = [answer({"city": "Oslo", "n": 3})] * 119 + [answer(arguments={"city": "Oslo"})]
        lines += [answer({"who": ["Nairobi Central"]})] * 12
        lines += [json.dumps({"messages": [{"role": "user", "content": "Zyxw"},
                                           {"role": "assistant", "content": "Zyxw is"}]})]
        training = write(os.path.join(tmp, "t.jsonl"), "\n".join(lines) + "\n")
        items = [field_item({"city": "Oslo", "date": "2026-01-02"}, [True, False]),
                 field_item({"city": "Oslo Fjord"}, [False]),
                 field_item({"name": "Nairobi", "age": 40}, [True, True]),
                 field_item({"name": "Zyxw"}, [False])]
        res = write(os.path.join(tmp, "r.json"), results(items))
        p = run("first_token_groups.py", "--model", MODEL, "--training", training, "--json", res)
        assert p.returncode == 0, p.stderr
        report = json.loads(p.stdout)
        assert report["training_values"] == 132 and report["distinct_first_tokens"] == 2
        groups = report["results"][res]
        assert groups["100+"] == {"right": 1, "fields": 2}, groups
        assert groups["10-99"] == {"right": 1, "fields": 1}, groups
        assert groups["never"] == {"right": 0, "fields": 1}, groups
        assert groups["1-9"] == {"right": 0, "fields": 0}, groups


def compare_file(path, rights, prompts=None):
    prompts = prompts or [f"q{i}" for i in range(len(rights))]
    items = [{"prompt": q, "score": {"correct": r}} for q, r in zip(prompts, rights)]
    return write(path, json.dumps({"tasks": {"arithmetic": {"metrics": [], "items": items}}}))


def test_task_eval_compare():
    with tempfile.TemporaryDirectory() as tmp:
        a7 = compare_file(os.path.join(tmp, "a7.json"), [True] * 4 + [False] * 4)
        b7 = compare_file(os.path.join(tmp, "b7.json"), [True] * 8)
        a8 = compare_file(os.path.join(tmp, "a8.json"), [True, False, True])
        b8 = compare_file(os.path.join(tmp, "b8.json"), [False, True, True])
        p = run("task_eval_compare.py", f"{a7}:{b7}", f"{a8}:{b8}", "--json")
        assert p.returncode == 0, p.stderr
        row = json.loads(p.stdout)["arithmetic"]
        # 1 item only A gets right, 5 only B: p = 2 * (C(6,0) + C(6,1)) / 2^6.
        assert (row["only_a"], row["only_b"], row["items"]) == (1, 5, 11), row
        assert abs(row["mcnemar_p"] - 2 * 7 / 64) < 1e-12, row
        other = compare_file(os.path.join(tmp, "o.json"), [True] * 8, [f"z{i}" for i in range(8)])
        p = run("task_eval_compare.py", f"{a7}:{other}")
        assert p.returncode != 0 and "different arithmetic items" in p.stderr, p.stderr
        p = run("task_eval_compare.py", a7)
        assert p.returncode != 0 and "A.json:B.json" in p.stderr, p.stderr


def test_task_eval_compare_per_task_rules():
    """A tool call counts when its name and arguments are right, an extraction item when its
    whole record is, small talk when it is on topic."""
    def scored(scores):
        tasks = {task: {"metrics": [], "items": [{"prompt": f"{task}{i}", "score": s}
                                                 for i, s in enumerate(items)]}
                 for task, items in scores.items()}
        return json.dumps({"tasks": tasks})
    with tempfile.TemporaryDirectory() as tmp:
        a = write(os.path.join(tmp, "a.json"), scored({
            "tools": [{"name": True, "arguments": False}, {"name": True, "arguments": True}],
            "extraction": [{"record": False, "fields": {"x": True}}],
            "chat": [{"in_text": True, "on_topic": False}]}))
        b = write(os.path.join(tmp, "b.json"), scored({
            "tools": [{"name": True, "arguments": True}, {"name": False, "arguments": True}],
            "extraction": [{"record": True, "fields": {"x": True}}],
            "chat": [{"in_text": True, "on_topic": True}]}))
        p = run("task_eval_compare.py", f"{a}:{b}", "--json")
        assert p.returncode == 0, p.stderr
        rows = json.loads(p.stdout)
        assert (rows["tools"]["only_a"], rows["tools"]["only_b"]) == (1, 1), rows
        assert (rows["extraction"]["only_a"], rows["extraction"]["only_b"]) == (0, 1), rows
        assert (rows["chat"]["only_a"], rows["chat"]["only_b"]) == (0, 1), rows


if __name__ == "__main__":
    test_first_token_groups()
    test_task_eval_compare()
    test_task_eval_compare_per_task_rules()
    print("ok")

"""bench/task_eval.py: the scorers on hand-made replies (a right reply scores 1, a wrong or broken
one 0, never an exception), generation is deterministic and separate from the training
generator, and a --n 3 run against the shipped model gives a report of the documented shape.
AFM_BIN is set by CTest.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import task_eval  # noqa: E402  (the import also runs its separation check)

AFM = os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm"))
MODEL = os.path.join(ROOT, "models", "afm-device-21m.gguf")


def test_extraction_scorer():
    want = {"payer": "Greta Szabo", "payee": "Bramble Coffee", "amount": 12.5,
            "currency": "EUR", "date": "2024-02-29"}
    right = task_eval.score_extraction(want, json.dumps(want))
    assert right["record"] and right["valid_json"] and all(right["fields"].values()), right
    # 12.50 written as a number with trailing zero is the same number.
    assert task_eval.score_extraction(want, json.dumps(want).replace("12.5", "12.50"))["record"]
    wrong = task_eval.score_extraction(want, json.dumps(dict(want, amount=12.05)))
    assert not wrong["record"] and not wrong["fields"]["amount"] and wrong["fields"]["payer"]
    # A number where a string is expected, or a string number, is wrong.
    assert not task_eval.score_extraction(want, json.dumps(dict(want, amount="12.5")))["record"]
    person = {"name": "Orla Drummond", "age": 44, "city": "Riga", "occupation": "welder"}
    assert task_eval.score_extraction(person, json.dumps(dict(person, age=44.0)))["record"]
    assert not task_eval.score_extraction(person, json.dumps(dict(person, age=True)))["record"]
    for broken in (None, "", '{"name": "Orla', "[1, 2]", "not json", '"Orla"'):
        s = task_eval.score_extraction(person, broken)
        assert not s["record"] and not any(s["fields"].values()) and not s["valid_json"], broken
    missing = task_eval.score_extraction(person, json.dumps({"name": "Orla Drummond"}))
    assert missing["fields"] == {"name": True, "age": False, "city": False,
                                 "occupation": False}, missing


def test_arithmetic_scorer():
    right = ["85 - 38 = 47.\nThe answer is 47.", "The answer is 47", "47", "It is 47.",
             "The answer is 47. (not 12)"]
    for reply in right:
        assert task_eval.score_arithmetic(47, reply)["correct"], reply
    wrong = ["The answer is 46.", "neutral", "", None, "47 - 1 = 46", "The answer is $20.", "4.7"]
    for reply in wrong:
        assert not task_eval.score_arithmetic(47, reply)["correct"], reply
    assert task_eval.score_arithmetic(0, "99 - 99 = 0.\nThe answer is 0.")["correct"]
    # strict: only the training format counts; the last-integer fallback does not.
    assert task_eval.score_arithmetic(47, "The answer is 47.")["strict"]
    assert not task_eval.score_arithmetic(47, "It is 47.")["strict"]
    assert not task_eval.score_arithmetic(47, "The answer is 46, or 47")["strict"]


def test_tools_scorer():
    def call(name, args):
        return [{"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}]

    weather = {"name": "get_weather", "arguments": {"city": "Galway"}}
    s = task_eval.score_tools(weather, call("get_weather", {"city": "Galway"}))
    assert s == {"called": True, "name": True, "arguments": True}, s
    # celsius is the tool's default: stating it equals leaving it out.
    assert task_eval.score_tools(weather, call("get_weather", {"city": "Galway",
                                                               "unit": "celsius"}))["arguments"]
    s = task_eval.score_tools(weather, call("get_weather", {"city": "Oslo"}))
    assert s["name"] and not s["arguments"], s
    fahrenheit = call("get_weather", {"city": "Galway", "unit": "fahrenheit"})
    assert not task_eval.score_tools(weather, fahrenheit)["arguments"]
    s = task_eval.score_tools(weather, call("calculate", {"expression": "1 + 1"}))
    assert not s["name"] and not s["arguments"], s
    # Only the first call counts.
    two = call("get_weather", {"city": "Oslo"}) + call("get_weather", {"city": "Galway"})
    assert not task_eval.score_tools(weather, two)["arguments"]
    calc = {"name": "calculate", "arguments": {"expression": "(12 + 30) * 4"}}
    assert task_eval.score_tools(calc, call("calculate", {"expression": "(12+30)*4"}))["arguments"]
    assert not task_eval.score_tools(calc, call("calculate", {"expression": "168"}))["arguments"]
    conv = {"name": "convert_units", "arguments": {"value": 5, "from_unit": "km", "to_unit": "mi"}}
    assert task_eval.score_tools(conv, call("convert_units", {"value": 5.0, "from_unit": "km",
                                                              "to_unit": "mi"}))["arguments"]
    for broken in (None, [], [{}], [{"name": "convert_units", "arguments": "{\"value\": 5"}],
                   [{"name": "convert_units", "arguments": None}], "x"):
        s = task_eval.score_tools(conv, broken)
        assert not s["arguments"], broken


def test_chat_scorer():
    s = task_eval.score_chat
    assert s("greeting", {"content": "Hello! How can I help?", "tool_calls": []}) == \
        {"in_text": True, "on_topic": True}
    assert s("farewell", {"content": "Hello! How can I help?", "tool_calls": []}) == \
        {"in_text": True, "on_topic": False}  # text, but not a goodbye
    call = [{"name": "get_weather", "arguments": "{}"}]
    assert s("greeting", {"content": "hello", "tool_calls": call}) == \
        {"in_text": False, "on_topic": False}  # a tool call is never small talk
    assert s("thanks", {"content": "worldwide", "tool_calls": []})["on_topic"] is False  # whole words
    for broken in (None, {}, {"content": None}, {"content": 3}, "text", {"content": "  "}):
        assert s("thanks", broken) == {"in_text": False, "on_topic": False}, broken
    assert s("unknown kind", {"content": "hello"})["on_topic"] is False


def test_generation():
    for task in task_eval.TASKS:
        a = task_eval.generate(task, 20, 7)
        assert a == task_eval.generate(task, 20, 7), task
        assert a != task_eval.generate(task, 20, 8), task
        assert len(a) == 20 and all(item["task"] == task for item in a)
    for item in task_eval.generate("arithmetic", 200, 1):
        e = item["expected"]
        assert 0 <= e <= 198, item
    for item in task_eval.generate("tools", 50, 1):
        names = [t["function"]["name"] for t in item["tools"]]
        assert item["expected"]["name"] in names and len(names) == len(set(names)) <= 3, item
    for item in task_eval.generate("chat", 50, 1):
        assert item["expected"] in task_eval.CHAT_TOPIC and item["messages"][-1]["content"]
    for item in task_eval.generate("extraction", 50, 1):
        schema = item["response_format"]["json_schema"]["schema"]
        assert schema["additionalProperties"] is False
        assert schema["required"] == list(schema["properties"]) == list(item["expected"]), item
    # The separation check fails on a generator that shares a city with the evaluation.
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "lexicon.cpp"), "w") as f:
            f.write('constexpr City kCities[] = {{"%s", "X"}};\n' % task_eval.CITIES[0])
        try:
            task_eval.check_separation(d)
        except AssertionError:
            pass
        else:
            raise AssertionError("check_separation missed a shared city")


def test_run_on_shipped_model():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "task_eval.py"),
                            "--model", MODEL, "--afm", AFM, "--n", "3", "--json", "--out", out],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "task_eval: tools 3/3" in r.stderr, r.stderr
        report = json.loads(r.stdout)
        with open(out) as f:
            assert json.load(f) == report
    assert report["n"] == 3 and report["seed"] == 7
    assert list(report["tasks"]) == list(task_eval.TASKS)
    expect_metrics = {"extraction": {"field_exact_match", "record_exact_match", "valid_json"},
                      "arithmetic": {"accuracy", "accuracy_add", "accuracy_sub", "accuracy_strict"},
                      "tools": {"name_accuracy", "argument_accuracy"},
                      "chat": {"in_text", "on_topic"}}
    for task, result in report["tasks"].items():
        metrics = {m["metric"]: m for m in result["metrics"]}
        assert expect_metrics[task] <= set(metrics), (task, metrics)
        for m in result["metrics"]:
            assert isinstance(m["n"], int) and m["n"] >= 0, m
            if m["metric"] != "errors":
                assert 0 <= m["value"] <= 1, m
        assert metrics["errors"]["value"] == 0, result
        assert len(result["items"]) == 3
        for item in result["items"]:
            assert {"kind", "prompt", "expected", "got", "finish_reason", "error",
                    "score"} <= set(item), item
            # The recorded score is what the scorer gives for the recorded reply.
            again = task_eval.score_item({"task": task, "expected": item["expected"]},
                                         item["got"])
            assert again == item["score"], (item, again)
    # Guided decoding: every extraction reply is valid JSON for its schema.
    assert all(i["score"]["valid_json"] for i in report["tasks"]["extraction"]["items"])
    # --help works and bad arguments are usage errors.
    h = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "task_eval.py"), "--help"],
                       capture_output=True, text=True, timeout=30)
    assert h.returncode == 0 and "--tasks" in h.stdout, h
    for args in (["--n", "0"], ["--tasks", "arithmetic,poetry"]):
        bad = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "task_eval.py"),
                              "--model", MODEL, *args], capture_output=True, text=True, timeout=30)
        assert bad.returncode == 2 and "task_eval.py: error" in bad.stderr, bad


def main():
    tests = [test_extraction_scorer, test_arithmetic_scorer, test_tools_scorer, test_chat_scorer,
             test_generation, test_run_on_shipped_model]
    for t in tests:
        t()
        print(f"ok {t.__name__}")


if __name__ == "__main__":
    main()

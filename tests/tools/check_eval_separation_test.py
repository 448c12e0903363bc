"""bench/check_eval_separation.py: its matcher flags every evaluation template of
bench/task_eval.py (and the lead + passage and weather + unit combinations task_eval sends) once
rendered with made-up values, in any case and spacing, and leaves ordinary requests alone; a
made-up afm that writes one coinciding request makes the script exit 1; and 3,000 conversations
of the real generator, with every variety knob on, contain no user message that is an instance
of an evaluation template (exit 0). AFM_BIN is set by CTest.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import check_eval_separation as ces  # noqa: E402

SCRIPT = os.path.join(ROOT, "bench", "check_eval_separation.py")
AFM = os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm"))
KNOBS = ["--invented-names", "70", "--bare-arithmetic", "60", "--restated-arithmetic", "60",
         "--broad-variety", "60", "--schema-constraints", "60", "--varied-phrasing", "60",
         "--wide-phrasing", "60"]

TE, _ = ces.load_task_eval()
PROBES, SKIPPED = ces.build_probes(TE)


class MadeUp(dict):
    """Format values for any placeholder: a number where task_eval puts one, else a made-up
    word no template contains."""

    def __missing__(self, key):
        return "1,234.5" if key in ces.NUMBER_PLACEHOLDERS else f"Zq{key}x 37"


def render(template):
    return template.format_map(MadeUp())


def test_every_template_is_caught():
    skipped = {s["template"] for s in SKIPPED}
    for template in TE._all_templates():
        if template in skipped:
            continue
        full, _ = ces.classify(render(template), PROBES)
        assert full, f"rendered template not flagged: {template!r}"
    # Case and whitespace differences do not hide a coincidence.
    text = render(TE.CONVERT_TEXTS[1]).upper().replace(" ", "  \n")
    assert ces.classify(text, PROBES)[0], text
    # Only the empty extraction lead is skipped today; a new skip should be a decision.
    assert [s["template"] for s in SKIPPED] == [""], SKIPPED


def test_numbers_do_not_swallow_words():
    # "{a}" is a number: a request that only starts like a template is not a coincidence.
    template = TE.SUB_TEXTS[3]
    assert ces.classify(render(template), PROBES)[0]
    assert not ces.classify(render(template)[:-1] + " and tell me the result.", PROBES)[0]


def test_rendered_combinations_are_caught():
    lead = TE.EXTRACTION_LEADS[0] + render(TE.PAYMENT_TEXTS[2])
    full, _ = ces.classify(lead, PROBES)
    assert any("EXTRACTION_LEADS[0] + PAYMENT_TEXTS[2]" == p.source for p in full), full
    weather = render(TE.WEATHER_TEXTS[1]) + " " + render(TE.WEATHER_UNIT_TEXTS[0])
    full, _ = ces.classify(weather, PROBES)
    assert any(p.source == "WEATHER_TEXTS[1] + ' ' + WEATHER_UNIT_TEXTS[0]" for p in full), full


def test_ordinary_requests_pass():
    for text in ("30 + 57 = ?", "Hello. If I change 2,800 euros, how many pounds do I get?",
                 "Compare the weather in Seattle and Montevideo.", "What can you do?",
                 "Express yourself.", "Hiya there"):
        full, near = ces.classify(text, PROBES)
        assert not full and not near, (text, full, near)
    # A shared long piece inside other text is near, not a full match.
    text = "Hi! Give me the temperature in Oslo and Bergen, and book a table."
    full, near = ces.classify(text, PROBES)
    assert not full and near, (full, near)


def test_exit_status_on_a_coinciding_generator():
    coinciding = render(TE.RATE_TEXTS[1])
    with tempfile.TemporaryDirectory() as d:
        fake = os.path.join(d, "afm")
        with open(fake, "w") as f:  # writes one conversation to --out, whatever else is asked
            f.write(f"#!{sys.executable}\nimport json, sys\n"
                    "out = sys.argv[sys.argv.index('--out') + 1]\n"
                    "msg = {'messages': [{'role': 'user', 'content': %r}], "
                    "'metadata': {'task': 'tools'}}\n"
                    "open(out, 'w').write(json.dumps(msg) + '\\n')\n" % coinciding)
        os.chmod(fake, 0o755)
        r = subprocess.run([sys.executable, SCRIPT, "--afm", fake, "--n", "1", "--json"],
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    summary = json.loads(r.stdout)
    assert summary["requests"] == 1 and summary["requests_per_task"] == {"tools": 1}, summary
    assert [m["source"] for m in summary["full_matches"]] == ["RATE_TEXTS[1]"], summary


def test_generator_is_separate():
    every_task = "arithmetic,tools,extraction,classification,chat"
    r = subprocess.run([sys.executable, SCRIPT, "--afm", AFM, "--n", "3000", "--tasks",
                        every_task, "--json", "--", *KNOBS],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), (r.returncode, r.stderr)
    summary = json.loads(r.stdout)
    assert summary["requests"] >= 3000, summary["requests"]
    assert set(summary["requests_per_task"]) == set(every_task.split(","))
    matches = "\n".join(f"{m['request']!r} ~ {m['source']} {m['template']!r}"
                        for m in summary["full_matches"])
    assert r.returncode == 0 and not matches, "training requests equal eval templates:\n" + matches
    h = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True,
                       timeout=30)
    assert h.returncode == 0 and "afm data synth" in h.stdout, h


def test_default_tasks_are_the_generators():
    """Without --tasks the check renders what `afm data synth` writes without it (its four
    default tasks, small talk not among them), so a dataset is checked at its own command."""
    r = subprocess.run([sys.executable, SCRIPT, "--afm", AFM, "--n", "200", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr)
    summary = json.loads(r.stdout)
    assert "--tasks" not in summary["command"], summary["command"]
    assert set(summary["requests_per_task"]) == {"arithmetic", "tools", "extraction",
                                                 "classification"}, summary


def main():
    tests = [test_every_template_is_caught, test_numbers_do_not_swallow_words,
             test_rendered_combinations_are_caught,
             test_ordinary_requests_pass, test_exit_status_on_a_coinciding_generator,
             test_generator_is_separate, test_default_tasks_are_the_generators]
    for t in tests:
        t()
        print(f"ok {t.__name__}")


if __name__ == "__main__":
    main()

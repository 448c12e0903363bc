#!/usr/bin/env python3
"""Separation check on *rendered* training requests: does `afm data synth` ever write a user
message that bench/task_eval.py could also send?

task_eval.check_separation() compares string literals of src/data/synth/*.cpp with pieces of
the evaluation templates; a generator that assembles requests from short phrase parts slips
past it. This script instead renders training conversations (`afm data synth --format jsonl`
with the given seed, size, tasks and knob flags) and matches every user message against every
evaluation template of task_eval.py, and against the concatenations task_eval renders (an
extraction lead followed by a passage text, a weather request followed by a unit request).

What it guarantees, for the rendered sample only (a larger --n covers more of the generator):
  full match  no training user message, whitespace-normalised and compared case-insensitively,
              is an instance of an evaluation template, each {placeholder} standing for any
              non-empty text. Templates with a placeholder but fewer than 8 characters of
              literal text (placeholders removed, spaces collapsed) are skipped (they would match almost anything) and listed; a
              template without placeholders is matched whatever its length, since it can only
              match itself.
  near        (a warning, not a failure) the training messages that contain a template's
              longest literal piece of >= 12 characters without being a full match: phrasing
              shared with the evaluation that a model could still learn from.

task_eval's own literal check (run at its import) is reported too ("literal_check"), as a
warning: when it fails, task_eval is imported from a copy outside the source tree so that the
rendered check still runs.

Exit status: 0 no full match; 1 a full match; 2 usage error, or afm could not produce the data.

Usage: bench/check_eval_separation.py [--n 20000] [--seed 1] [--tasks arithmetic,tools,...]
           [--afm build/afm] [--json] [-- EXTRA SYNTH FLAGS, e.g. --bare-arithmetic 60]
"""
import argparse
import collections
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK_EVAL = os.path.join(ROOT, "bench", "task_eval.py")
PLACEHOLDER = re.compile(r"\{[a-z_]+\}")  # the placeholder syntax task_eval's templates use
MIN_LITERAL = 8  # literal characters a template with placeholders needs to be specific
MIN_NEAR_PIECE = 12  # shorter shared pieces are ordinary English, not a shared template
# Placeholders task_eval fills with a plain number: they match digits (with separators) only,
# so "Subtract 30 from 53 and tell me the result." is not taken for "Subtract {b} from {a}."
# with {a} = "53 and tell me the result". Every other placeholder matches any text.
NUMBER_PLACEHOLDERS = {"a", "b", "c", "value", "count", "age"}
NUMBER = r"[0-9][0-9.,]*"
ANY_TEXT = ".+?"
MAX_NEAR_EXAMPLES = 20

Probe = collections.namedtuple("Probe", "source template regex pieces near_piece")


def _import_by_path(path):
    spec = importlib.util.spec_from_file_location("task_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_task_eval(path=TASK_EVAL):
    """(task_eval module, None), or (module, message) when its literal check fails at import.

    The rendered check must still run then (the literal failure says nothing about rendered
    requests), so the module is imported again from a copy outside the source tree, where
    task_eval skips the literal check as it documents for absent C++ sources."""
    try:
        return _import_by_path(path), None
    except AssertionError as e:
        failure = str(e)
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "bench"))
        copy = os.path.join(d, "bench", os.path.basename(path))
        shutil.copyfile(path, copy)
        return _import_by_path(copy), failure


def normalise(text):
    """Runs of whitespace become one space, ends trimmed: newlines and double spaces in either
    generator must not hide a coincidence."""
    return " ".join(text.split())


def _names_by_template(te):
    """Template text -> its name in task_eval (PERSON_TEXTS[2], CALC_TEXTS['mix'], ...), so a
    report says where a template lives instead of only what it says."""
    names = {}

    def add(text, name):
        if isinstance(text, str):
            names.setdefault(text, name)

    for attr in dir(te):
        if not attr.isupper():
            continue
        value = getattr(te, attr)
        if isinstance(value, str):
            add(value, attr)
        elif isinstance(value, list):
            for i, text in enumerate(value):
                add(text, f"{attr}[{i}]")
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, list):
                    for i, text in enumerate(item):
                        add(text, f"{attr}[{key!r}][{i}]")
                else:
                    add(item, f"{attr}[{key!r}]")
    return names


def _rendered_combinations(te, name_of):
    """(source, template) for the concatenations task_eval's generators actually send:
    make_extraction sends lead + passage, _weather sends request + " " + unit request. Named
    explicitly: if task_eval renames these groups this fails loudly instead of checking less."""
    out = []
    for lead in te.EXTRACTION_LEADS:
        for text in te.PERSON_TEXTS + te.EVENT_TEXTS + te.PAYMENT_TEXTS:
            out.append((f"{name_of[lead]} + {name_of[text]}", lead + text))
    for text in te.WEATHER_TEXTS:
        for unit in te.WEATHER_UNIT_TEXTS:
            out.append((f"{name_of[text]} + ' ' + {name_of[unit]}", text + " " + unit))
    return out


def compile_probe(source, template):
    """A Probe for one template, or None with the reason it is skipped."""
    text = normalise(template)
    pieces = PLACEHOLDER.split(text)
    has_placeholder = len(pieces) > 1
    literal = normalise("".join(pieces))
    if not literal:
        return None, "only placeholders"
    if has_placeholder and len(literal) < MIN_LITERAL:
        return None, f"literal part {literal!r} shorter than {MIN_LITERAL} characters"
    # A placeholder stands for a number or any non-empty text; fullmatch anchors both ends.
    names = [m.group(0)[1:-1] for m in PLACEHOLDER.finditer(text)]
    pattern = re.escape(pieces[0])
    for name, piece in zip(names, pieces[1:]):
        pattern += (NUMBER if name in NUMBER_PLACEHOLDERS else ANY_TEXT) + re.escape(piece)
    regex = re.compile(pattern, re.IGNORECASE | re.DOTALL)
    lowered = [p.lower() for p in pieces if p]
    longest = max((p.strip() for p in lowered), key=len, default="")
    near_piece = longest if len(longest) >= MIN_NEAR_PIECE else None
    return Probe(source, template, regex, lowered, near_piece), None


def build_probes(te):
    """(probes, skipped) for every template of task_eval and every rendered combination;
    probes with the same regex are merged (the empty lead + a text is the text)."""
    name_of = _names_by_template(te)
    singles = [(name_of.get(t, f"_all_templates()[{i}]"), t)
               for i, t in enumerate(te._all_templates())]
    probes, skipped, seen = [], [], set()
    for source, template in singles + _rendered_combinations(te, name_of):
        probe, reason = compile_probe(source, template)
        if probe is None:
            skipped.append({"source": source, "template": template, "reason": reason})
        elif probe.regex.pattern not in seen:
            seen.add(probe.regex.pattern)
            probes.append(probe)
    return probes, skipped


def classify(text, probes):
    """(full, near): the probes whose template the message is an instance of, and the probes
    whose longest literal piece it contains (only reported when there is no full match)."""
    text = normalise(text)
    low = text.lower()
    # Every literal piece must occur for a full match: a cheap filter before the regex.
    full = [p for p in probes
            if all(piece in low for piece in p.pieces) and p.regex.fullmatch(text)]
    near = [] if full else [p for p in probes if p.near_piece and p.near_piece in low]
    return full, near


def run_synth(afm, seed, n, tasks, extra, out_path):
    """Writes the training conversations to out_path and returns the command as run; raises
    RuntimeError when afm fails."""
    cmd = [afm, "data", "synth", "--seed", str(seed), "--n", str(n), "--format", "jsonl",
           "--out", out_path, *(["--tasks", tasks] if tasks else []), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return [arg if arg != out_path else "TMP.jsonl" for arg in cmd]  # the file is temporary


def _content_text(content):
    """A message's text: a string, or the text parts of an OpenAI content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def user_requests(path):
    """(task, text) for every user message of every conversation in a JSONL file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            conversation = json.loads(line)
            task = (conversation.get("metadata") or {}).get("task", "unknown")
            for message in conversation.get("messages", []):
                if message.get("role") == "user":
                    yield task, _content_text(message.get("content"))


def check(requests, probes):
    """The summary of matching (task, text) pairs against the probes."""
    per_task = collections.Counter()
    full_matches, near_examples = [], []
    near_count, near_by_piece = 0, collections.Counter()
    for task, text in requests:
        per_task[task] += 1
        full, near = classify(text, probes)
        for p in full:
            full_matches.append({"task": task, "request": text, "source": p.source,
                                 "template": p.template})
        if near:
            near_count += 1
            pieces = sorted({p.near_piece for p in near})
            near_by_piece.update(pieces)
            if len(near_examples) < MAX_NEAR_EXAMPLES:
                near_examples.append({"task": task, "request": text, "pieces": pieces,
                                      "sources": [p.source for p in near]})
    return {"requests": sum(per_task.values()), "requests_per_task": dict(sorted(per_task.items())),
            "full_matches": full_matches,
            "near": {"count": near_count, "by_piece": dict(near_by_piece.most_common()),
                     "examples": near_examples}}


def text_report(summary):
    lines = [f"command: {' '.join(summary['command'])}",
             f"templates: {summary['probes']} patterns checked (templates and rendered "
             f"combinations), {len(summary['skipped'])} skipped"]
    lines += [f"  skipped {s['source']}: {s['reason']}" for s in summary["skipped"]]
    per_task = ", ".join(f"{t} {n}" for t, n in summary["requests_per_task"].items())
    lines.append(f"training requests checked: {summary['requests']} ({per_task})")
    lines.append(f"full matches: {len(summary['full_matches'])}")
    lines += [f"  [{m['task']}] {m['request']!r}\n    matches {m['source']}: {m['template']!r}"
              for m in summary["full_matches"]]
    near = summary["near"]
    lines.append(f"near (warning; contains a template's longest literal piece of >= "
                 f"{MIN_NEAR_PIECE} chars): {near['count']} requests")
    lines += [f"  {n:6d} x {piece!r}" for piece, n in near["by_piece"].items()]
    if near["examples"]:
        lines.append(f"  first {len(near['examples'])} examples:")
        lines += [f"    [{e['task']}] {e['request']!r}" for e in near["examples"]]
    lines.append(f"task_eval literal check (warning only): {summary['literal_check']}")
    lines.append("separation: " + ("FAILED" if summary["full_matches"] else "ok"))
    return "\n".join(lines)


def parse_args(argv):
    """Our options, and everything after a bare `--` passed through to `afm data synth`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    p = argparse.ArgumentParser(
        description="Render training conversations with `afm data synth` and fail (exit 1) "
                    "when a user message is an instance of a bench/task_eval.py evaluation "
                    "template; shared phrases are reported as a warning.",
        epilog="Flags after a bare `--` go to `afm data synth` unchanged, e.g. `-- "
               "--bare-arithmetic 60 --broad-variety 60` (see `afm data synth --help`).")
    p.add_argument("--afm", default=os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm")),
                   help="afm binary (default: $AFM_BIN, else build/afm)")
    p.add_argument("--n", type=int, default=20000, help="conversations to render (default 20000)")
    p.add_argument("--seed", type=int, default=1, help="afm data synth --seed (default 1)")
    # No default of its own: a dataset written without --tasks (afm data synth's four default
    # tasks, classification and not chat) is checked by the same command without --tasks.
    p.add_argument("--tasks", default=None,
                   help="afm data synth --tasks (default: afm data synth's own, so that the "
                        "check at a dataset's seed, count and knobs renders that dataset; "
                        "name chat to include small talk)")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    args = p.parse_args(argv)
    if args.n < 1:
        p.error("--n must be >= 1")
    return args, extra


def main(argv=None):
    args, extra = parse_args(argv)
    te, literal_failure = load_task_eval()
    if literal_failure:  # reported, not our verdict: task_eval itself refuses to run on it
        print(f"check_eval_separation: warning: task_eval.py's literal check fails: "
              f"{literal_failure}", file=sys.stderr)
    probes, skipped = build_probes(te)
    started = time.time()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "synth.jsonl")
        print(f"check_eval_separation: rendering {args.n} conversations", file=sys.stderr)
        try:
            command = run_synth(args.afm, args.seed, args.n, args.tasks, extra, out)
        except (OSError, RuntimeError) as e:
            print(f"check_eval_separation: {e}", file=sys.stderr)
            return 2
        summary = check(user_requests(out), probes)
    summary.update(command=command, probes=len(probes), skipped=skipped,
                   literal_check=literal_failure or "ok",
                   ok=not summary["full_matches"], wall_s=round(time.time() - started, 2))
    print(f"check_eval_separation: {summary['requests']} requests checked in "
          f"{summary['wall_s']} s", file=sys.stderr)
    print(json.dumps(summary, indent=1, ensure_ascii=False) if args.json
          else text_report(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

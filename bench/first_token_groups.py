#!/usr/bin/env python3
"""Where copying errors come from (docs/models.md, "Spelled names"): group the string fields of
bench/task_eval.py's extraction items by how often the first token of their value (the model's
tokenizer on " " + its first word, the spelling the value has inside running text) begins a
string value in the answers of a training set, and print how many of each group a model got
exactly right.

A value whose first token never began a copied value in training is one whose spelling without
the leading space the model was never taught; the tokenizer spells a word after a space with
other tokens than after a quote.

usage: first_token_groups.py --model M.gguf --training T.jsonl RESULTS.json...
  --model     GGUF model whose tokenizer to use (`afm tokenize`)
  --training  training conversations (`afm data synth --format jsonl`): string values of the
              assistant answers (JSON content and tool-call arguments) are counted
  RESULTS     `task_eval.py --out` files holding extraction items
Dates (YYYY-MM-DD) are left out: they are rewritten, not copied.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GROUPS = ("never", "1-9", "10-99", "100+")
DATE = re.compile(r"\d{4}-\d\d-\d\d")


def string_values(value):
    """Every non-blank string inside a JSON value."""
    if isinstance(value, str):
        if value.strip():
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from string_values(v)
    elif isinstance(value, list):
        for v in value:
            yield from string_values(v)


def answer_values(conversation):
    """String values of the assistant's JSON answers and tool-call arguments."""
    for message in conversation.get("messages", []):
        if message.get("role") != "assistant":
            continue
        payloads = [message.get("content")]
        payloads += [c["function"]["arguments"] for c in message.get("tool_calls") or []]
        for payload in payloads:
            try:
                yield from string_values(json.loads(payload or ""))
            except json.JSONDecodeError:
                continue


def in_text_spelling(value):
    """The first word of a value as running text has it: after a space."""
    words = value.split()
    return " " + (words[0] if words else value)


def first_tokens(afm, model, texts):
    """The first token id of each text (one `afm tokenize --lines` call for the distinct ones:
    training values repeat the same first words many times)."""
    distinct = sorted(set(texts))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(distinct) + "\n")
        path = f.name
    try:
        out = subprocess.run([afm, "tokenize", "-m", model, "-f", path, "--lines"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    ids = [json.loads(line) for line in out.splitlines() if line.strip()]
    if len(ids) != len(distinct):
        raise SystemExit(f"first_token_groups: {len(distinct)} lines sent, {len(ids)} tokenized")
    first = {text: row[0] if row else None for text, row in zip(distinct, ids)}
    return [first[text] for text in texts]


def group_of(count):
    return "never" if count == 0 else "1-9" if count < 10 else "10-99" if count < 100 else "100+"


def scored_fields(results_path):
    """(value, right) for every non-date string field of a results file's extraction items."""
    with open(results_path) as f:
        items = json.load(f)["tasks"]["extraction"]["items"]
    for item in items:
        fields = (item.get("score") or {}).get("fields") or {}
        for key, value in item["expected"].items():
            if isinstance(value, str) and not DATE.fullmatch(value):
                yield value, bool(fields.get(key))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--training", required=True)
    ap.add_argument("--afm", default=os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm")))
    ap.add_argument("--json", action="store_true", help="print the groups as JSON")
    ap.add_argument("results", nargs="+")
    args = ap.parse_args()

    with open(args.training) as f:
        values = [v for line in f if line.strip() for v in answer_values(json.loads(line))]
    counts = Counter(first_tokens(args.afm, args.model, [in_text_spelling(v) for v in values]))
    report = {"training_values": len(values), "distinct_first_tokens": len(counts), "results": {}}
    for path in args.results:
        fields = list(scored_fields(path))
        firsts = first_tokens(args.afm, args.model, [in_text_spelling(v) for v, _ in fields])
        tally = {g: [0, 0] for g in GROUPS}
        for (_, right), token in zip(fields, firsts):
            cell = tally[group_of(counts[token])]
            cell[0] += right
            cell[1] += 1
        report["results"][path] = {g: {"right": r, "fields": n} for g, (r, n) in tally.items()}

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"training: {report['training_values']} string values, "
          f"{report['distinct_first_tokens']} distinct first tokens")
    print("first token began a training value: " + " | ".join(GROUPS))
    for path, tally in report["results"].items():
        cells = [f"{t['right']}/{t['fields']} = {t['right'] / max(1, t['fields']):.2f}"
                 for t in tally.values()]
        print(f"{path}: " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Drop training conversations whose assistant turns hold a name of the evaluation generator.

`afm data synth --spelled-names` builds names from a tokenizer's word pieces at random, so now
and then it writes a word that bench/task_eval.py also uses ("Riga" is " R" + "iga"). The
separation rule (docs/data.md) is that evaluation names never appear in training answers; this
filter enforces it on any JSONL of conversations: every line whose assistant content or tool
call arguments contain one of task_eval's first names, last names, cities, companies,
occupations or events as a whole word is dropped, and the counts are printed on stderr.

Usage: bench/drop_eval_names.py [--shuffle SEED] < IN.jsonl > OUT.jsonl
  --shuffle SEED  first shuffle the lines with random.Random(SEED) (recipes mix several synth
                  outputs and shuffle them in one pass)
Exit status: 0; 2 on a line that is not a JSON conversation.
"""
import argparse
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import task_eval  # noqa: E402  (the evaluation generator's lists)


def assistant_text(conversation):
    parts = []
    for m in conversation.get("messages", []):
        if m.get("role") == "assistant":
            parts.append(m.get("content") or "")
            parts.append(json.dumps(m.get("tool_calls") or []))
    return " ".join(parts)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shuffle", type=int, help="shuffle the kept lines with this seed")
    args = p.parse_args()
    names = sorted(set(task_eval.evaluation_words()), key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b")
    lines = [line if line.endswith("\n") else line + "\n" for line in sys.stdin if line.strip()]
    if args.shuffle is not None:  # before filtering, so a seed gives the same order either way
        random.Random(args.shuffle).shuffle(lines)
    kept, dropped = [], 0
    for number, line in enumerate(lines, 1):
        try:
            conversation = json.loads(line)
        except json.JSONDecodeError as e:
            print(f"drop_eval_names: line {number}: not JSON ({e})", file=sys.stderr)
            return 2
        if pattern.search(assistant_text(conversation)):
            dropped += 1
        else:
            kept.append(line)
    sys.stdout.writelines(kept)
    print(f"drop_eval_names: kept {len(kept)}, dropped {dropped}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

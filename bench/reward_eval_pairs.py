#!/usr/bin/env python3
"""Preference pairs for judging a reward model on the evaluation generator's items
(bench/task_eval.py: its own names, templates and phrasings, never seen in training data).

arithmetic: chosen "The answer is T." against rejected "The answer is T + d." (d in +-1..9).
extraction: chosen the true record as JSON against the record with one field changed (a number
moved by 1..9, a string with one character dropped), graded by the fraction of fields right.

Usage: bench/reward_eval_pairs.py --out pairs.jsonl [--n 200] [--seed 7]
Then score a reward model on them (90% of the pairs held out; the step-0 evaluation is the
model as given, before its one update):
  afm train reward --base RM.gguf --data pairs.jsonl --out DIR --steps 1 --val-fraction 0.9
and read the step-0 val_accuracy in DIR/log.jsonl.
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import task_eval  # noqa: E402


def spoil(value, rng):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value + rng.choice([-1, 1]) * rng.randint(1, 9)
    text = str(value)
    i = rng.randrange(len(text))
    return text[:i] + text[i + 1:]


def pair(item, rng):
    if item["task"] == "arithmetic":
        truth = item["expected"]
        wrong = truth + rng.choice([-1, 1]) * rng.randint(1, 9)
        chosen, rejected, grade = f"The answer is {truth}.", f"The answer is {wrong}.", 0.0
    else:
        record = dict(item["expected"])
        field = rng.choice(sorted(record))
        bad = dict(record, **{field: spoil(record[field], rng)})
        chosen, rejected = json.dumps(record), json.dumps(bad)
        grade = (len(record) - 1) / len(record)
    return {"messages": item["messages"],
            "chosen": {"role": "assistant", "content": chosen}, "chosen_grade": 1.0,
            "rejected": {"role": "assistant", "content": rejected}, "rejected_grade": grade}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=200, help="items per task")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    rng = random.Random(f"afm-reward-eval/{a.seed}")
    with open(a.out, "w") as f:
        for task in ("arithmetic", "extraction"):
            for item in task_eval.generate(task, a.n, a.seed):
                f.write(json.dumps(pair(item, rng)) + "\n")
    print(json.dumps({"out": a.out, "pairs": 2 * a.n}))


if __name__ == "__main__":
    main()

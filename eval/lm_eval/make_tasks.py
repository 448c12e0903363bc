#!/usr/bin/env python3
"""Regenerates the data of the lm-eval tasks in this folder from bench/task_eval.py's held-out
generator (its own names, templates and system prompts, checked apart from the training
generator), so lm-eval scores the same kind of items afm's own evaluation does:

  afm_arithmetic   multiple choice: a two-digit sum or difference in afm's chat format; the
                   answer "The answer is N." against three near misses (N +- 1, N +- 10).

Deterministic from --seed (default 41, apart from task_eval's usual 7, 8, 9).
Run from the repository root: .venv/bin/python eval/lm_eval/make_tasks.py
"""
import argparse
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import task_eval  # noqa: E402


def arithmetic_items(n, seed):
    rng = random.Random(f"afm-lm-eval/{seed}/arithmetic")
    out = []
    for item in task_eval.generate("arithmetic", n, seed):
        truth = item["expected"]
        wrong = sorted({truth + 1, truth - 1, truth + 10, truth - 10} - {truth})
        choices = [truth] + rng.sample(wrong, 3)
        rng.shuffle(choices)
        out.append({"system": item["messages"][0]["content"],
                    "question": item["messages"][1]["content"],
                    "choices": [f"The answer is {c}." for c in choices],
                    "gold": choices.index(truth)})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=41)
    p.add_argument("--n", type=int, default=200)
    args = p.parse_args()
    path = os.path.join(ROOT, "eval", "lm_eval", "data", "afm_arithmetic.jsonl")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for item in arithmetic_items(args.n, args.seed):
            f.write(json.dumps(item) + "\n")
    os.replace(tmp, path)  # atomic: a reader never sees half a file
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

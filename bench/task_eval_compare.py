#!/usr/bin/env python3
"""Compare two models item by item on the same bench/task_eval.py items (the same seeds and
counts): for each task, the items only the first model gets right, those only the second gets
right, and the exact two-sided McNemar p-value of that split. With 100 items a proportion near
0.9 has a standard error of about 0.03, so two models' totals alone cannot separate a change of
a few points; the items both get right or both get wrong say nothing about the difference.

usage: task_eval_compare.py A_seed7.json:B_seed7.json [A_seed8.json:B_seed8.json ...]
  each argument pairs two `task_eval.py --out` files of the same items; pairs are pooled
What counts as right per item: arithmetic `correct`; extraction, every field right (the
record); tools, the tool's name and its arguments; chat, `on_topic`.
"""
import argparse
import json
import math
import sys

RIGHT = {
    "arithmetic": lambda s: bool(s.get("correct")),
    "extraction": lambda s: bool(s.get("record")),
    "tools": lambda s: bool(s.get("name")) and bool(s.get("arguments")),
    "chat": lambda s: bool(s.get("on_topic")),
}


def mcnemar_p(only_a, only_b):
    """Exact two-sided McNemar test: the binomial tail of the discordant pairs at 1/2."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2 ** n)


def tasks_of(path):
    with open(path) as f:
        return json.load(f)["tasks"]


def compare(pairs):
    """{task: [only_a, only_b, items]} pooled over the pairs of result files."""
    tally = {}
    for path_a, path_b in pairs:
        tasks_a, tasks_b = tasks_of(path_a), tasks_of(path_b)
        for task in sorted(set(tasks_a) & set(tasks_b) & set(RIGHT)):
            items_a, items_b = tasks_a[task]["items"], tasks_b[task]["items"]
            if [i["prompt"] for i in items_a] != [i["prompt"] for i in items_b]:
                raise SystemExit(f"task_eval_compare: {path_a} and {path_b} hold different "
                                 f"{task} items (not the same seed and count)")
            cell = tally.setdefault(task, [0, 0, 0])
            for item_a, item_b in zip(items_a, items_b):
                right_a = RIGHT[task](item_a.get("score") or {})
                right_b = RIGHT[task](item_b.get("score") or {})
                cell[0] += right_a and not right_b
                cell[1] += right_b and not right_a
                cell[2] += 1
    return tally


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pairs", nargs="+", help="A.json:B.json")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    pairs = []
    for pair in args.pairs:
        if pair.count(":") != 1:
            ap.error(f"{pair!r} is not A.json:B.json")
        pairs.append(tuple(pair.split(":")))
    tally = compare(pairs)
    rows = {task: {"only_a": a, "only_b": b, "items": n, "mcnemar_p": mcnemar_p(a, b)}
            for task, (a, b, n) in tally.items()}
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'task':12s}{'items':>7s}{'only A':>8s}{'only B':>8s}{'McNemar p':>11s}")
    for task, r in rows.items():
        print(f"{task:12s}{r['items']:7d}{r['only_a']:8d}{r['only_b']:8d}{r['mcnemar_p']:11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

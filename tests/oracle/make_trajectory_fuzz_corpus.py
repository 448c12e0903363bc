"""Writes the seed corpus of fuzz/trajectory_fuzz.cpp: trajectory groups as generators publish
them (docs/rl.md), valid ones and a few that break one rule each.

    python3 tests/oracle/make_trajectory_fuzz_corpus.py   # rewrites tests/data/rl/trajectory_corpus
"""
import json
import pathlib

OUT = pathlib.Path(__file__).resolve().parents[1] / "data" / "rl" / "trajectory_corpus"


def group(samples, **extra):
    g = {"format": 1, "id": "0-1700000000000-3", "version": 4, "generator": 0, "task": 17,
         "kind": "extraction", "sample_seconds": 0.75, "samples": samples}
    g.update(extra)
    return g


def sample(tokens, spans, reward=0.5):
    n = sum(e - b for b, e in spans)
    return {"tokens": tokens, "trained": spans, "behaviour": [-0.5 - i / 8 for i in range(n)],
            "reward": reward, "completion_tokens": n}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    cases = {
        "two_samples.json": group([sample([1, 5, 9, 2], [[2, 4]]), sample([1, 5, 7, 8, 2], [[2, 5]], 1.0)]),
        "two_spans.json": group([sample([1, 2, 3, 4, 5, 6], [[1, 2], [4, 6]])], kind="tools"),
        "bad_span.json": group([sample([1, 2, 3], [[0, 2]])]),
        "bad_behaviour.json": group([{"tokens": [1, 2], "trained": [[1, 2]], "behaviour": [0.5],
                                      "reward": 0, "completion_tokens": 1}]),
        "old_format.json": group([sample([1, 2], [[1, 2]])], format=0),
    }
    for name, value in cases.items():
        (OUT / name).write_text(json.dumps(value))


if __name__ == "__main__":
    main()

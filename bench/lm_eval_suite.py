#!/usr/bin/env python3
"""lm-eval (PyPI lm_eval) against `afm serve`, with the task definitions of eval/lm_eval/ (no
downloads): starts the server with the model on a free port, points lm-eval's
`local-completions` model at its /v1/completions (log-probabilities with echo) and its
/tokenize routes (`tokenizer_backend=remote`), and prints each task's metrics; --json prints
the results object, --samples FILE writes lm-eval's per-document records.

Usage: bench/lm_eval_suite.py --model models/afm-device-21m.gguf [--tasks afm_arithmetic]
           [--limit N] [--afm build/afm] [--json] [--samples FILE.json]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
# lm-eval and Hugging Face datasets must not reach for the network: the tasks' data is local.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import task_eval  # noqa: E402  (the Server helper)


def model_id(url):
    import urllib.request
    with urllib.request.urlopen(url + "/v1/models", timeout=30) as r:
        return json.load(r)["data"][0]["id"]


def evaluate(url, tasks, limit):
    """lm-eval's results dict (with "samples") for `tasks` on the server at `url` (afm serve's
    base URL, without /v1)."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    args = (f"model={model_id(url)},base_url={url}/v1/completions,"
            "tokenizer_backend=remote,num_concurrent=1,max_retries=1,tokenized_requests=True")
    cwd = os.getcwd()
    os.chdir(ROOT)  # the tasks' data paths are relative to the repository root
    try:
        return lm_eval.simple_evaluate(
            model="local-completions", model_args=args, tasks=tasks,
            task_manager=TaskManager(include_path=os.path.join(ROOT, "eval", "lm_eval")),
            limit=limit, log_samples=True, bootstrap_iters=0)
    finally:
        os.chdir(cwd)


def run(model, tasks, limit, afm, threads=None):
    """lm-eval's results dict (with "samples") for `tasks` on `model` served by afm."""
    server = task_eval.Server(afm, model, threads=threads)
    try:
        return evaluate(server.url, tasks, limit)
    finally:
        server.stop()


def table(results):
    lines = ["| task | metric | value |", "|---|---|---|"]
    for task, metrics in results["results"].items():
        for name, value in metrics.items():
            if isinstance(value, float) and not name.endswith("_stderr,none"):
                lines.append(f"| {task} | {name.split(',')[0]} | {value:.4f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="GGUF model file")
    p.add_argument("--tasks", default="afm_arithmetic", help="comma-separated task names")
    p.add_argument("--limit", type=int, default=None, help="documents per task (default: all)")
    p.add_argument("--afm", default=os.path.join(ROOT, "build", "afm"))
    p.add_argument("-t", "--threads", type=int, default=None)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--samples", help="write lm-eval's per-document records here")
    args = p.parse_args(argv)
    results = run(args.model, args.tasks.split(","), args.limit, args.afm, args.threads)
    if args.samples:
        with open(args.samples, "w") as f:
            json.dump(results["samples"], f, default=str)
    if args.json:
        print(json.dumps({"results": results["results"], "n-samples": results.get("n-samples")},
                         default=str))
    else:
        print(table(results))


if __name__ == "__main__":
    main()

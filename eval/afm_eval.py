#!/usr/bin/env python3
"""afm eval: task suites against a model file or a running server, one table (or --json).

Tasks (--tasks, comma-separated):
  perplexity       the model's perplexity (`afm perplexity`, scored like llama-perplexity) on
                   --text, else on the evaluation generator's user messages (100 per task
                   with --seed: text no model here was trained on); needs --model
  extraction, arithmetic, tools, chat
                   the held-out evaluation generator's items (bench/task_eval.py: its own names,
                   templates and phrasings), sent through the official `openai` client at
                   temperature 0 and scored
  lm_eval:NAME     an lm-eval (PyPI lm_eval) task defined in eval/lm_eval/ (no downloads),
                   through the server's /v1/completions and /tokenize routes

With --model, one `afm serve` is started for every task that needs a server; with --server
URL, the tasks run against that server (whatever model it serves). `afm eval` runs this file
with the project's Python (the checkout's .venv when there is one); it can also run directly.

    afm eval -m models/afm-device-21m.gguf --tasks perplexity,extraction,lm_eval:afm_arithmetic
        [--n 100] [--seed 7] [--limit N] [--text FILE] [-t THREADS] [--json] [--out FILE]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # the checkout, or PREFIX/share/afm once installed
sys.path.insert(0, os.path.join(ROOT, "bench"))

import task_eval  # noqa: E402  (the evaluation generator, scorers and server helper)

GENERATOR_TASKS = task_eval.TASKS
DEFAULT_TASKS = "perplexity,extraction,arithmetic,tools,chat"
PERPLEXITY_ITEMS = 100  # generator items per task in the default perplexity text (~8k tokens)


class UsageError(Exception):
    pass


def lm_eval_task_names():
    """Task names defined by the YAML files of eval/lm_eval/."""
    names = []
    for path in sorted(glob.glob(os.path.join(HERE, "lm_eval", "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            m = re.search(r"^task:\s*(\S+)", f.read(), re.M)
        if m:
            names.append(m.group(1))
    return names


def parse_tasks(spec):
    tasks = [t.strip() for t in spec.split(",") if t.strip()]
    if not tasks:
        raise UsageError("--tasks is empty")
    known_lm = lm_eval_task_names()
    for t in tasks:
        if t.startswith("lm_eval:"):
            if t[len("lm_eval:"):] not in known_lm:
                raise UsageError(f"unknown lm-eval task {t!r} (defined in eval/lm_eval/: "
                                 f"{', '.join(known_lm) or 'none'})")
        elif t != "perplexity" and t not in GENERATOR_TASKS:
            raise UsageError(f"unknown task {t!r} (known: perplexity, "
                             f"{', '.join(GENERATOR_TASKS)}, lm_eval:NAME)")
    if len(set(tasks)) != len(tasks):
        raise UsageError("--tasks names a task twice")
    return tasks


def generator_text(n, seed):
    """Held-out text for perplexity: the evaluation generator's user messages (passages,
    questions and requests), one per line."""
    lines = []
    for task in ("extraction", "arithmetic", "tools", "chat"):
        for item in task_eval.generate(task, n, seed):
            lines.append(item["messages"][-1]["content"].replace("\n", " "))
    return "\n".join(lines) + "\n"


def run_perplexity(args):
    with tempfile.TemporaryDirectory() as tmp:
        path = args.text
        if not path:
            path = os.path.join(tmp, "heldout.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(generator_text(PERPLEXITY_ITEMS, args.seed))
        cmd = [args.afm, "perplexity", "-m", args.model, "-f", path, "--json",
               "--chunk", str(args.chunk)]
        if args.threads:
            cmd += ["-t", str(args.threads)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("afm perplexity failed: " + r.stderr.strip())
        out = json.loads(r.stdout)
    return {"metrics": [{"metric": "perplexity", "value": round(out["perplexity"], 4),
                         "n": out["scored_tokens"]},
                        {"metric": "nll_per_token", "value": round(out["nll"], 4),
                         "n": out["scored_tokens"]}],
            "text": args.text or f"evaluation generator, seed {args.seed}, "
                                 f"{PERPLEXITY_ITEMS} items per task", "chunk": args.chunk}


def run_lm_eval(url, name, limit):
    try:
        import lm_eval_suite
    except ImportError as e:
        raise RuntimeError(f"lm-eval tasks need the lm_eval package ({e}); "
                           "scripts/setup --tests installs it") from e
    res = lm_eval_suite.evaluate(url, [name], limit)
    metrics = []
    n = (res.get("n-samples") or {}).get(name, {}).get("effective")
    for key, value in res["results"][name].items():
        if isinstance(value, float) and not key.endswith("_stderr,none"):
            metrics.append({"metric": key.split(",")[0], "value": round(value, 4), "n": n})
    return {"metrics": metrics}


def run_all(args, tasks):
    results = {"model": args.model, "server": args.server, "seed": args.seed, "n": args.n,
               "tasks": {}}
    started = time.time()
    served = [t for t in tasks if t != "perplexity"]
    server, client = None, None
    try:
        url = args.server.rstrip("/") if args.server else None
        if served and not url:
            server = task_eval.Server(args.afm, args.model, args.threads)
            url = server.url
        if served:
            import openai
            client = openai.OpenAI(base_url=url + "/v1", api_key=args.api_key or "unused",
                                   timeout=300, max_retries=0)
            try:  # with the key, when the server has one
                model_id = client.models.list().data[0].id
            except openai.OpenAIError as e:
                raise RuntimeError(f"the server at {url} did not list its model: {e}") from e
        for task in tasks:
            if task == "perplexity":
                results["tasks"][task] = run_perplexity(args)
            elif task.startswith("lm_eval:"):
                results["tasks"][task] = run_lm_eval(url, task[len("lm_eval:"):], args.limit)
            else:
                r = task_eval.run_task(client, model_id, task, args.n, args.seed)
                if not args.items:
                    r.pop("items")
                results["tasks"][task] = r
    finally:
        if client:
            client.close()  # an open keep-alive connection would hold the server's shutdown
        if server:
            server.stop()
    results["wall_s"] = round(time.time() - started, 2)
    return results


def parse_args(argv):
    p = argparse.ArgumentParser(prog="afm eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model", help="GGUF model file (served by a fresh afm serve)")
    p.add_argument("--server", help="base URL of a running OpenAI-compatible afm serve "
                   "(instead of --model; perplexity needs --model)")
    p.add_argument("--api-key", help="the server's API key (with --server)")
    p.add_argument("--tasks", default=DEFAULT_TASKS, help=f"comma-separated (default {DEFAULT_TASKS})")
    p.add_argument("--n", type=int, default=100, help="generator items per task (default 100)")
    p.add_argument("--seed", type=int, default=7, help="generator seed (default 7)")
    p.add_argument("--limit", type=int, default=None, help="lm-eval documents per task (default all)")
    p.add_argument("--text", help="text file for perplexity (default: the generator's text)")
    p.add_argument("--chunk", type=int, default=512,
                   help="perplexity: tokens per chunk, the second half scored (default 512)")
    p.add_argument("-t", "--threads", type=int, default=None, help="compute threads of afm")
    p.add_argument("--afm", default=os.environ.get("AFM_BIN", os.path.join(ROOT, "build", "afm")),
                   help="afm binary (default: $AFM_BIN, else build/afm)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.add_argument("--items", action="store_true", help="keep every generator item's record "
                   "(prompt, expected, reply, score) in the JSON")
    p.add_argument("--out", help="also write the JSON results to this file")
    args = p.parse_args(argv)
    if bool(args.model) == bool(args.server):
        p.error("give exactly one of --model and --server")
    if args.model and not os.path.isfile(args.model):
        p.error(f"no model file {args.model}")
    if args.text and not os.path.isfile(args.text):
        p.error(f"no text file {args.text}")
    if args.n < 1:
        p.error("--n must be >= 1")
    if args.chunk < 16:
        p.error("--chunk must be >= 16")
    if args.limit is not None and args.limit < 1:
        p.error("--limit must be >= 1")
    try:
        tasks = parse_tasks(args.tasks)
    except UsageError as e:
        p.error(str(e))
    if "perplexity" in tasks and not args.model:
        p.error("the perplexity task needs --model (it runs the engine, not the server)")
    return args, tasks


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    args, tasks = parse_args(argv)
    try:
        results = run_all(args, tasks)
    except (RuntimeError, OSError, ImportError) as e:
        print(f"afm eval: error: {e}", file=sys.stderr)
        return 1
    text = json.dumps(results, indent=1, ensure_ascii=False)
    if args.out:
        write_atomic(args.out, text + "\n")
    if args.json:
        print(text)
    else:
        print(task_eval.table(results, task_width=24, metric_width=38))
        print(f"wall time {results['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

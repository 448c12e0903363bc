"""Speculative decoding vs plain decoding on the same model, through `afm serve` at temperature 0:
decode tokens/s (the server's `timings.predicted_n / predicted_ms`, so prefill is excluded),
the speed-up over plain decoding, the share of drafted tokens accepted, forced tokens and
verification passes per generated token (each item decoded --reps times, the fastest counted),
for guided extraction (json_schema), tool calls
(tool_choice required), free chat and copying text. Every speculative answer is checked to equal
the plain answer (content and tool calls) — a difference is reported and fails the run.

Items come from bench/task_eval.py's evaluation generator (its own names and phrasings; the
models never trained on them). Configurations: plain, --lookup N, --model-draft D, and both.
Servers run one at a time with one slot on a quiet machine.

    .venv/bin/python bench/speculative_bench.py [--model M] [--draft D] [--lookup 3]
        [--n 20] [--reps 3] [--threads 2] [--seed 5] [--tasks extraction,tools,chat,copy] [--json]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import task_eval  # noqa: E402  (bench/ sibling: the evaluation item generator)
from host_info import cpu_name  # noqa: E402

COPY_TEXTS = [
    "The committee met on a grey Tuesday morning to review the harbour plans, the budget for "
    "the new ferry terminal and the timetable for the repairs to the northern sea wall.",
    "Please keep the receipt, the warranty card and the original box, because the shop will "
    "only accept returns within thirty days when all three are brought back together.",
    "Water the tomatoes every second evening, pinch out the side shoots each weekend and tie "
    "the main stem to its cane as it grows taller through the summer months.",
]


def make_items(n, seed):
    rng = random.Random(seed)
    items = {"extraction": [task_eval.make_extraction(rng) for _ in range(n)],
             "tools": [dict(task_eval.make_tools(rng), tool_choice="required") for _ in range(n)],
             "chat": [task_eval.make_chat(rng) for _ in range(n)]}
    items["copy"] = [{"task": "copy", "messages": [{"role": "user",
                                                    "content": "Repeat this text exactly: " + t}]}
                     for t in (COPY_TEXTS * n)[:n]]
    return items


def request_body(item):
    body = {"messages": item["messages"], "temperature": 0,
            "max_tokens": task_eval.MAX_TOKENS.get(item["task"], 96)}
    for key in ("response_format", "tools", "tool_choice"):
        if key in item:
            body[key] = item[key]
    return body


class Server:
    def __init__(self, afm, model, threads, extra):
        cmd = [afm, "serve", "-m", model, "--port", "0", "--slots", "1", "-t", str(threads), *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, errors="replace")
        for line in self.proc.stderr:
            m = re.search(r"listening on (http://[\d.]+:\d+)", line)
            if m:
                self.url = m.group(1)
                break
        else:
            raise SystemExit(f"afm serve {' '.join(extra)} did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(60)


def answer_of(message):
    calls = [(c.function.name, c.function.arguments) for c in (message.tool_calls or [])]
    return {"content": message.content, "tool_calls": calls}


def run_config(a, name, extra, items):
    server = Server(a.afm, a.model, a.threads, extra)
    try:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0,
                               timeout=600)
        model_id = client.models.list().data[0].id
        client.chat.completions.create(model=model_id, max_tokens=4,  # warm-up
                                       messages=[{"role": "user", "content": "Hello."}])
        out = {}
        for task, task_items in items.items():
            answers, tokens, ms = [], 0, 0.0
            drafted = accepted = forced = passes = 0
            for item in task_items:
                # Each item a.reps times; its fastest decode counts (the noise on a 2-core VM
                # is one-sided), the counters of the first.
                times = []
                for rep in range(a.reps):
                    r = client.chat.completions.create(model=model_id, **request_body(item))
                    t = r.model_extra["timings"]
                    times.append(t["predicted_ms"])
                    if rep == 0:
                        answers.append(answer_of(r.choices[0].message))
                        tokens += t["predicted_n"]
                        drafted += t.get("draft_n", 0)
                        accepted += t.get("draft_n_accepted", 0)
                        forced += t.get("forced_n_accepted", 0)
                        passes += t.get("verification_passes", 0)
                ms += min(times)
            out[task] = {"answers": answers, "tokens": tokens, "decode_ms": ms,
                         "tokens_per_s": 1000.0 * tokens / ms if ms else 0.0,
                         "drafted": drafted, "accepted": accepted, "forced": forced,
                         "passes": passes}
        return out
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--afm", default="build/afm")
    ap.add_argument("--model", default="models/afm-device-21m.gguf")
    ap.add_argument("--draft", default="models/afm-device-21m-draft.gguf",
                    help="draft model (skipped when the file is absent)")
    ap.add_argument("--lookup", type=int, default=3)
    ap.add_argument("--n", type=int, default=20, help="items per task")
    ap.add_argument("--reps", type=int, default=3, help="requests per item (the fastest counts)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--tasks", default="extraction,tools,chat,copy",
                    help="which tasks (tool calls need a vocabulary with tool-call tokens)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    items = {t: v for t, v in make_items(a.n, a.seed).items() if t in a.tasks.split(",")}
    configs = [("plain", []), (f"lookup {a.lookup}", ["--lookup", str(a.lookup)])]
    if os.path.exists(a.draft):
        configs += [("draft", ["--model-draft", a.draft]),
                    (f"draft + lookup {a.lookup}", ["--model-draft", a.draft, "--lookup", str(a.lookup)])]
    results = {}
    for name, extra in configs:
        print(f"running {name}", file=sys.stderr, flush=True)
        results[name] = run_config(a, name, extra, items)
    mismatches = []
    for name, by_task in results.items():
        for task, r in by_task.items():
            for i, (got, want) in enumerate(zip(r["answers"], results["plain"][task]["answers"])):
                if got != want:
                    mismatches.append(f"{name} / {task} item {i}: {got} != {want}")
    if a.json:
        print(json.dumps({"cpu": cpu_name(), "threads": a.threads, "model": a.model,
                          "results": {n: {t: {k: v for k, v in r.items() if k != "answers"}
                                          for t, r in bt.items()} for n, bt in results.items()},
                          "mismatches": mismatches}, indent=2))
    else:
        print(f"CPU: {cpu_name()}, {a.threads} threads; {os.path.basename(a.model)}; {a.n} items "
              f"per task, temperature 0, max_tokens as bench/task_eval.py (copy: 96)\n")
        print("| task | configuration | decode tok/s | x plain | drafted accepted | forced "
              "| passes / token |")
        print("|---|---|---|---|---|---|---|")
        for task in items:
            plain = results["plain"][task]["tokens_per_s"]
            for name, by_task in results.items():
                r = by_task[task]
                acc = f"{r['accepted']}/{r['drafted']}" if r["drafted"] else "-"
                per = f"{r['passes'] / r['tokens']:.2f}" if r["passes"] else "-"
                print(f"| {task} | {name} | {r['tokens_per_s']:.1f} | {r['tokens_per_s'] / plain:.2f} "
                      f"| {acc} | {r['forced'] or '-'} | {per} |")
        print(f"\nanswers identical to plain decoding: {'yes' if not mismatches else 'NO'}")
    for m in mismatches:
        print("MISMATCH " + m, file=sys.stderr)
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()

"""Concurrent streams against `afm serve` (continuous batching) and llama.cpp's llama-server on
the same GGUF, same threads, in one run: aggregate completion tokens/s, time to first token and
inter-token latency (p50 / p99) at 1, 4, 8 and 16 concurrent streams, plus afm without batching
as the baseline batching replaces.

The model is the Qwen2-0.5B-shaped q8_0 file of bench/make_bench_model.py (random weights,
llama.cpp's Qwen2 vocabulary and ChatML template), which both servers load; llama-server is
built from the pinned llama-cpp-python sdist (bench/llama_cpp_build.py). Each stream sends
chat completions at temperature 0 with max_tokens tokens, one after another, for --rounds
rounds; streams start together. Servers run one at a time on a quiet machine.

    .venv/bin/python bench/serve_batch_bench.py [--streams 1,4,8,16] [--threads 2]
        [--max-tokens 64] [--rounds 2] [--model M.gguf] [--json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

import openai

from host_info import cpu_name  # bench/ is on sys.path when run as a script
from llama_cpp_build import CACHE, build, log

PROMPTS = ["Tell me about the sea.", "Write a short poem about trees.", "Explain how rain forms.",
           "Describe a busy market.", "What makes a good story?", "List some old inventions.",
           "Talk about mountains.", "Why do birds sing?"]


def start(cmd, ready_pattern, url_of):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            errors="replace")
    for line in proc.stderr:
        m = re.search(ready_pattern, line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, url_of(m)
    raise SystemExit(f"{cmd[0]} did not start")


def afm_server(model, streams, threads, batching):
    cmd = ["build/afm", "serve", "-m", model, "--port", "0", "--slots", str(streams), "-c", "1024",
           "-t", str(threads)]
    if not batching:
        cmd.append("--no-batching")
    return start(cmd, r"listening on (http://[\d.]+:\d+)", lambda m: m.group(1) + "/v1")


def llama_server(binary, model, streams, threads, port=18911):
    cmd = [binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-np", str(streams),
           "-c", str(1024 * streams), "-t", str(threads), "-tb", str(threads)]
    return start(cmd, r"listening on (http://[\d.]+:\d+)", lambda m: m.group(1) + "/v1")


def one_request(client, model_id, prompt, max_tokens, out):
    start = time.perf_counter()
    stamps = []
    usage = None
    for chunk in client.chat.completions.create(
            model=model_id, messages=[{"role": "user", "content": prompt}], temperature=0,
            max_tokens=max_tokens, stream=True, stream_options={"include_usage": True}):
        if chunk.choices and chunk.choices[0].delta.content:
            stamps.append(time.perf_counter())
        if chunk.usage:
            usage = chunk.usage
    if stamps:
        out["ttft"].append(stamps[0] - start)
        out["itl"].extend(b - a for a, b in zip(stamps, stamps[1:]))
    out["tokens"] += usage.completion_tokens if usage else len(stamps)


def measure(url, streams, max_tokens, rounds):
    client = openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=600)
    model_id = client.models.list().data[0].id
    one_request(client, model_id, "Hello.", 8, {"ttft": [], "itl": [], "tokens": 0})  # warm-up
    results = [{"ttft": [], "itl": [], "tokens": 0} for _ in range(streams)]

    def stream(i):
        for r in range(rounds):
            one_request(client, model_id, PROMPTS[(i + r) % len(PROMPTS)] + f" ({i}.{r})",
                        max_tokens, results[i])

    t0 = time.perf_counter()
    workers = [threading.Thread(target=stream, args=(i,)) for i in range(streams)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - t0
    ttft = sorted(x for r in results for x in r["ttft"])
    itl = sorted(x for r in results for x in r["itl"])
    pct = lambda v, q: v[min(len(v) - 1, int(q * len(v)))] * 1000 if v else float("nan")
    tokens = sum(r["tokens"] for r in results)
    return {"streams": streams, "tokens": tokens, "wall_s": wall, "tokens_per_s": tokens / wall,
            "ttft_p50_ms": pct(ttft, 0.5), "ttft_p99_ms": pct(ttft, 0.99),
            "itl_p50_ms": pct(itl, 0.5), "itl_p99_ms": pct(itl, 0.99)}


def run_engine(name, launch, streams_list, a):
    rows = []
    for n in streams_list:
        log(f"{name}: {n} stream(s)")
        proc, url = launch(n)
        try:
            rows.append(dict(engine=name, **measure(url, n, a.max_tokens, a.rounds)))
        finally:
            proc.terminate()
            proc.wait(60)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", default="1,4,8,16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--model", help="GGUF both servers load (default: the q8_0 bench model)")
    ap.add_argument("--engines", default="afm,afm-no-batching,llama-server")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = ap.parse_args()
    streams = [int(s) for s in a.streams.split(",")]
    model = a.model
    if model is None:
        subprocess.run([sys.executable, "bench/make_bench_model.py", os.path.join(CACHE, "models"),
                        "--types", "q8_0"], check=True, stdout=subprocess.DEVNULL)
        model = os.path.join(CACHE, "models", "qwen2-0.5b-q8_0.gguf")
    engines = a.engines.split(",")
    launchers = {
        "afm": lambda n: afm_server(model, n, a.threads, True),
        "afm-no-batching": lambda n: afm_server(model, n, a.threads, False),
    }
    if "llama-server" in engines:
        binary = build("llama-server")
        launchers["llama-server"] = lambda n: llama_server(binary, model, n, a.threads)
    rows = []
    for e in engines:
        rows += run_engine(e, launchers[e], streams, a)
    if a.json:
        print(json.dumps({"cpu": cpu_name(), "threads": a.threads, "model": model, "rows": rows}, indent=2))
        return
    by = {(r["engine"], r["streams"]): r for r in rows}
    print(f"CPU: {cpu_name()}, {a.threads} threads; {os.path.basename(model)}; "
          f"max_tokens {a.max_tokens}, {a.rounds} requests per stream\n")
    print("| engine | streams | tokens/s | x own 1 stream | x llama-server | TTFT p50 / p99 ms "
          "| ITL p50 / p99 ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        single = by.get((r["engine"], 1))
        peer = by.get(("llama-server", r["streams"]))
        own = f"{r['tokens_per_s'] / single['tokens_per_s']:.2f}" if single else "-"
        vs = f"{r['tokens_per_s'] / peer['tokens_per_s']:.2f}" if peer else "-"
        print(f"| {r['engine']} | {r['streams']} | {r['tokens_per_s']:.1f} | {own} | {vs} | "
              f"{r['ttft_p50_ms']:.0f} / {r['ttft_p99_ms']:.0f} | "
              f"{r['itl_p50_ms']:.1f} / {r['itl_p99_ms']:.1f} |")


if __name__ == "__main__":
    main()

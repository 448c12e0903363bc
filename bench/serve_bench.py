"""`afm serve` end to end with the official openai client: time to first token and completion
tokens/s for plain text, json_schema and forced tool calls on the same model, so the cost of
guided decoding shows as a ratio against unconstrained decoding measured in the same run, next
to the engine's own decode rate (`afm bench -n`, no HTTP, no sampling) as the ceiling.

    .venv/bin/python bench/serve_bench.py [--afm build/afm] [--model M] [--requests 8] [--max-tokens 96]
"""
import argparse
import json
import re
import statistics
import subprocess
import threading
import time

import openai

PROMPT = "Ana Lima is a 34-year-old nurse who lives in Lisbon."
SYSTEM = "You are a careful assistant that extracts structured data from text."
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["name", "age", "city", "notes"],
          "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
                         "city": {"type": "string"}, "notes": {"type": "array", "items": {"type": "string"}}}}
TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                       "additionalProperties": False}}}


def start_server(afm, model):
    proc = subprocess.Popen([afm, "serve", "-m", model, "--port", "0", "--slots", "1", "-t", "2"],
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.match(r"listening on http://([\d.]+):(\d+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, f"http://{m.group(1)}:{m.group(2)}/v1"
    raise SystemExit("afm serve did not start")


def run(client, model_id, mode, max_tokens):
    kwargs = dict(model=model_id, temperature=0, max_tokens=max_tokens, stream=True,
                  stream_options={"include_usage": True},
                  messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}])
    if mode == "plain":  # a prompt the small default model answers at some length
        kwargs.update(messages=[{"role": "user", "content": "What is 2 plus 3?"}])
    if mode == "json_schema":
        kwargs["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": "Person", "schema": SCHEMA, "strict": True}}
    if mode == "tool_call":
        kwargs["tools"] = [TOOL]
        kwargs["tool_choice"] = "required"
    start = time.perf_counter()
    first = None
    usage = None
    for chunk in client.chat.completions.create(**kwargs):
        if first is None and chunk.choices and (chunk.choices[0].delta.content or chunk.choices[0].delta.tool_calls):
            first = time.perf_counter()
        if chunk.usage:
            usage = chunk.usage
    end = time.perf_counter()
    n = usage.completion_tokens
    # Whole-request rate: tool calls arrive in one piece at the end, so a rate after the first
    # chunk would mean nothing for them.
    return ((first or end) - start), n / (end - start), n


def engine_decode_rate(afm, model):
    out = subprocess.run([afm, "bench", "-m", model, "-p", "64", "-n", "64", "-t", "2", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return next(r["tokens_per_second"] for r in json.loads(out)["results"] if r["test"] == "tg64")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--afm", default="build/afm")
    ap.add_argument("--model", default="models/afm-device-21m.gguf")
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=96)
    a = ap.parse_args()
    proc, url = start_server(a.afm, a.model)
    try:
        client = openai.OpenAI(base_url=url, api_key="none")
        model_id = client.models.list().data[0].id
        rows = {}
        for mode in ("plain", "json_schema", "tool_call"):
            run(client, model_id, mode, a.max_tokens)  # warm-up
            results = [run(client, model_id, mode, a.max_tokens) for _ in range(a.requests)]
            rows[mode] = (statistics.median(r[0] for r in results) * 1e3,
                          statistics.median(r[1] for r in results), statistics.median(r[2] for r in results))
    finally:
        proc.terminate()
        proc.wait()
    print(f"engine decode ceiling (afm bench tg64, 2 threads): {engine_decode_rate(a.afm, a.model):.1f} tok/s")
    print("| mode | first content ms (median) | completion tok/s, whole request (median) | tokens | vs plain |")
    print("|---|---|---|---|---|")
    for mode, (ttft, rate, n) in rows.items():
        print(f"| {mode} | {ttft:.1f} | {rate:.1f} | {n:.0f} | {rate / rows['plain'][1]:.2f}x |")


if __name__ == "__main__":
    main()

"""Asynchronous against synchronous RLOO on this machine (report section 5.2; docs/rl.md):
the same prompts, objective and hyperparameters, run to the same number of updates by
`afm train rloo --sync` and by `afm train rloo --generators N` (a Redis broker, N generator
processes, one updater process). Reports per run: wall time to the last update, mean reward of
the first and last quarter of the updates, generator tokens/s (sampled completion tokens per
second of sampling, summed over generators), updater tokens/s (positions through the policy per
second of updating), the share of the updater's time spent waiting for data, and the staleness
histogram of the groups used (versions behind the updater).

    .venv/bin/python bench/rloo_async_bench.py --afm build/afm --steps 16 --threads 2

Thread budget: the synchronous run gets --threads for both sampling and updating; an async run
with N generators gives each generator --generator-threads and the updater --threads, so on a
machine with few cores the processes share them (the lines say how many were used).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def records(out):
    with open(os.path.join(out, "log.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def summarize(name, out, wall):
    steps = [r for r in records(out) if "loss" in r]
    q = max(1, len(steps) // 4)
    row = {"run": name, "updates": len(steps), "wall_s": round(wall, 1),
           "reward_first_quarter": round(statistics.mean(r["reward"] for r in steps[:q]), 3),
           "reward_last_quarter": round(statistics.mean(r["reward"] for r in steps[-q:]), 3)}
    if "sample_s" in steps[0]:  # synchronous
        sample = sum(r["sample_s"] for r in steps)
        update = sum(r["update_s"] for r in steps)
        row["generator_tokens_per_s"] = round(sum(r["completion_tokens"] for r in steps) / sample, 1)
        row["sample_share"] = round(sample / (sample + update), 3)
    else:
        row["generator_tokens_per_s"] = round(statistics.mean(r["generator_tokens_per_s"] for r in steps), 1)
        row["updater_tokens_per_s"] = round(statistics.mean(r["updater_tokens_per_s"] for r in steps), 1)
        row["updater_wait_share"] = round(sum(r["wait_s"] for r in steps) /
                                          sum(r["wait_s"] + r["update_s"] for r in steps), 3)
        row["staleness_histogram"] = steps[-1]["staleness_histogram"]
        row["dropped_stale"] = steps[-1]["dropped_stale"]
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--afm", default="build/afm")
    p.add_argument("--base", default="models/afm-device-21m.gguf")
    p.add_argument("--steps", type=int, default=16)
    p.add_argument("--prompts-per-step", type=int, default=4)
    p.add_argument("-k", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--generator-threads", type=int, default=1)
    p.add_argument("--generators", default="1,2", help="comma-separated generator counts")
    p.add_argument("--max-staleness", type=int, default=2)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        prompts = os.path.join(tmp, "prompts.jsonl")
        subprocess.run([a.afm, "data", "synth", "--seed", "9", "--n", "400", "--tasks",
                        "arithmetic,extraction,tools", "--bare-arithmetic", "60",
                        "--invented-names", "70", "--format", "jsonl", "--out", prompts],
                       check=True, capture_output=True)
        common = ["--base", a.base, "--prompts", prompts, "--steps", str(a.steps),
                  "--prompts-per-step", str(a.prompts_per_step), "-k", str(a.k),
                  "--max-new-tokens", str(a.max_new_tokens), "--checkpoint-every", "0",
                  "-t", str(a.threads), "--seed", "3"]
        runs = [("sync", ["--sync"])]
        for n in [int(x) for x in a.generators.split(",") if x]:
            runs.append((f"async, {n} generator(s)",
                         ["--generators", str(n), "--generator-threads", str(a.generator_threads),
                          "--max-staleness", str(a.max_staleness)]))
        for name, extra in runs:
            out = os.path.join(tmp, name.replace(" ", "_").replace(",", "").replace("(", "").replace(")", ""))
            t0 = time.time()
            subprocess.run([a.afm, "train", "rloo", *common, "--out", out, *extra], check=True,
                           capture_output=True)
            rows.append(summarize(name, out, time.time() - t0))
            print(json.dumps(rows[-1]) if a.json else rows[-1], flush=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"\nCPU: {cpu}, {os.cpu_count()} logical CPUs; steps {a.steps}, prompts/step "
          f"{a.prompts_per_step}, k {a.k}, max new tokens {a.max_new_tokens}")


if __name__ == "__main__":
    main()

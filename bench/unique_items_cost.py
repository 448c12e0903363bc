"""What uniqueItems costs per token mask: the same schemas timed with `uniqueItems: true` and with
it switched to false, by the afm guided driver (bench/guided_bench.cpp), one thread, cold.

Schemas: a seeded sample of the held-out CloudFormation schemas that use uniqueItems (from the
wheels of bench/requirements-schemas.txt, as bench/schema_coverage.py fetches them) plus one
synthetic schema whose instance has 20 tag objects, 30 names and 5 enum values. Instances are
sampled by the driver from the unique grammar, tokenized with HF `tokenizers`, and the same token
sequences are timed under both grammars. Prints mask p50 / p99 / total per variant and pass.

Usage: .venv/bin/python bench/unique_items_cost.py [--build build]
           [--tokenizer build/bench-cache/guided/tokenizer-150000/tokenizer.json] [--schemas 80]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)
import schema_coverage  # noqa: E402

SYNTHETIC = {
    "type": "object", "additionalProperties": False, "required": ["Tags", "Names", "Modes"],
    "properties": {
        "Tags": {"type": "array", "uniqueItems": True, "items": {
            "type": "object", "additionalProperties": False, "required": ["Key", "Value"],
            "properties": {"Key": {"type": "string", "maxLength": 128},
                           "Value": {"type": "string", "maxLength": 256}}}},
        "Names": {"type": "array", "uniqueItems": True,
                  "items": {"type": "string", "pattern": "^[a-z0-9-]+$"}},
        "Modes": {"type": "array", "uniqueItems": True,
                  "items": {"enum": ["read", "write", "list", "delete", "admin"]}}}}
SYNTHETIC_INSTANCE = {
    "Tags": [{"Key": f"team-{i}", "Value": f"owner {i % 7}"} for i in range(20)],
    "Names": [f"subnet-{i:04d}" for i in range(30)],
    "Modes": ["write", "list", "read", "admin", "delete"]}


def tasks(driver, tokenizer, count, seed, tmp):
    from tokenizers import Tokenizer
    hf = Tokenizer.from_file(tokenizer)
    text = json.dumps(SYNTHETIC_INSTANCE, separators=(",", ":"))
    out = [{"name": "synthetic", "schema": json.dumps(SYNTHETIC), "text": text,
            "tokens": [hf.encode(text, add_special_tokens=False).ids]}]
    wheels = schema_coverage.download_wheels(os.path.join("build", "bench-cache", "schemas"))
    picked = [(n, d) for n, d in schema_coverage.cloudformation(wheels) if b'"uniqueItems": true' in d]
    random.Random(seed).shuffle(picked)
    for i, (name, data) in enumerate(picked[:count]):
        path = os.path.join(tmp, "schema.json")
        with open(path, "wb") as f:
            f.write(data)
        r = subprocess.run([driver, tokenizer, "--sample", path, str(i), "400"], capture_output=True,
                           timeout=300)
        if r.returncode == 0 and r.stdout:  # refused schemas and long walks are left out
            text = r.stdout.decode()
            out.append({"name": name, "schema": data.decode(), "text": text,
                        "tokens": [hf.encode(text, add_special_tokens=False).ids]})
    return out


def time_masks(driver, tokenizer, task_file):
    r = subprocess.run([driver, tokenizer, task_file], capture_output=True, check=True, timeout=3600)
    masks = []
    for line in r.stdout.decode().splitlines():
        if line.startswith("{"):
            masks += json.loads(line).get("mask_us", [])
    masks.sort()
    return masks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--tokenizer",
                    default=os.path.join("build", "bench-cache", "guided", "tokenizer-150000",
                                         "tokenizer.json"),
                    help="tokenizer.json (default: the one bench/guided_bench.py trains)")
    ap.add_argument("--schemas", type=int, default=80, help="CloudFormation schemas sampled")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--passes", type=int, default=2)
    args = ap.parse_args()
    driver = os.path.join(args.build, "bench", "guided_bench")
    with tempfile.TemporaryDirectory() as tmp:
        unique = tasks(driver, args.tokenizer, args.schemas, args.seed, tmp)
        plain = [dict(t, schema=t["schema"].replace('"uniqueItems": true', '"uniqueItems": false')
                      .replace('"uniqueItems":true', '"uniqueItems":false')) for t in unique]
        files = {}
        for name, ts in (("uniqueItems", unique), ("uniqueItems false", plain)):
            files[name] = os.path.join(tmp, name.replace(" ", "_") + ".json")
            with open(files[name], "w") as f:
                json.dump(ts, f)
        print(f"{len(unique)} schemas ({len(unique) - 1} CloudFormation + 1 synthetic)")
        print("| variant | pass | masks | mask p50 us | mask p99 us | total ms |")
        print("|---|---|---|---|---|---|")
        for p in range(args.passes):
            for name, path in files.items():
                m = time_masks(driver, args.tokenizer, path)
                at = lambda q: m[min(len(m) - 1, int(q * len(m)))]  # noqa: E731
                print(f"| {name} | {p + 1} | {len(m)} | {at(0.5):.2f} | {at(0.99):.1f} | "
                      f"{sum(m) / 1000:.1f} |")


if __name__ == "__main__":
    main()

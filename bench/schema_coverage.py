"""Guided-generation coverage on real-world schemas afm was not developed on.

The schemas come out of the wheels pinned in bench/requirements-schemas.txt (downloaded with
`pip download --no-deps` into --cache, never installed): SchemaStore schemas vendored by
check-jsonschema and ansible-lint, nbformat's notebook schemas and validate-pyproject's tables
("schemastore"), the CloudFormation resource schemas of cfn-lint ("cloudformation") and the
Kubernetes object schemas of kubernetes-validate ("kubernetes", one API version, its references
to the shared definitions file bundled into each schema as `$defs`). jsonschemabench is not
among them, so this is the held-out set issue 23 asks to build for.

Each schema is tried as a user would: `afm schema compile --schema F`. A refusal must exit 1
naming a keyword (anything else is a failure of afm and is listed). From each compiled schema
(up to --sample per source) --n instances are sampled with a 400-token tokenizer and checked
with the `jsonschema` package (bench/schema_oracle.py: the schema's own draft, formats asserted,
exact decimals). With --peers, llguidance and XGrammar compile the same schemas (their
bench/guided_bench.py settings), and one instance walked from each peer's own masks per
compiled schema (up to --sample per source, the same schemas afm samples where both compile)
is checked the same way: compiling is not enforcing.

Usage: .venv/bin/python bench/schema_coverage.py [--build build] [--cache build/bench-cache/schemas]
           [--sources schemastore,cloudformation,kubernetes] [--limit N] [--sample N] [--n 2]
           [--sample-matching REGEX] [--peers] [--json OUT]
--sources jsonschemabench runs the development set (../shared/data) the same way.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import zipfile

import jsonschema

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH_DIR)
sys.path.insert(0, BENCH_DIR)
import schema_oracle  # noqa: E402

SMALL_VOCAB = os.path.join(ROOT, "tests/data/hf/qwen2/tokenizer.json")  # 400 tokens
KUBERNETES_VERSION = "v1.37.0-local-strict"
KUBERNETES_SHARED = "/api/_definitions.json#"


def download_wheels(cache):
    wheels = os.path.join(cache, "wheels")
    os.makedirs(wheels, exist_ok=True)
    req = os.path.join(BENCH_DIR, "requirements-schemas.txt")
    with open(req) as f:
        wanted = [line for line in f if line.strip() and not line.startswith("#")]
    have = [w for w in os.listdir(wheels) if w.endswith(".whl")]
    if len(have) < len(wanted):
        print("downloading the schema wheels (pip download --no-deps)...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-r", req,
                        "-d", wheels], check=True)
    return {w.split("-")[0]: os.path.join(wheels, w)
            for w in os.listdir(wheels) if w.endswith(".whl")}


def members(wheel, pattern):
    """(name, bytes) of every member of `wheel` whose path matches `pattern`, sorted by name."""
    with zipfile.ZipFile(wheel) as z:
        names = sorted(n for n in z.namelist() if re.search(pattern, n))
        return [(n, z.read(n)) for n in names]


def schemastore(wheels):
    out = []
    for pkg, pattern in (("check_jsonschema", r"builtin_schemas/.*\.json$"),
                         ("ansible_lint", r"ansiblelint/schemas/(?!__store__).*\.json$"),
                         ("nbformat", r"nbformat/v[34]/.*\.schema\.json$"),
                         ("validate_pyproject", r"validate_pyproject/.*\.schema\.json$")):
        out += [(os.path.basename(n), data) for n, data in members(wheels[pkg], pattern)]
    return out


def cloudformation(wheels):
    return [(os.path.basename(n), data) for n, data in
            members(wheels["cfn_lint"], r"cfnlint/data/schemas/resources/[^/]*\.json$")]


def kubernetes(wheels):
    """Each object schema with the shared definitions it reaches copied into its `$defs`."""
    files = dict(members(wheels["kubernetes_validate"],
                         rf"kubernetes-json-schema/{KUBERNETES_VERSION}/[^/]*\.json$"))
    shared_name = next(n for n in files if n.endswith("/_definitions.json"))
    shared = json.loads(files.pop(shared_name))["$defs"]
    out = []
    for name, data in sorted(files.items()):
        schema = json.loads(data)
        defs = {}
        pending = list(bundle_refs(schema))
        while pending:
            key = pending.pop()
            if key not in defs:
                defs[key] = shared[key]
                pending += list(bundle_refs(shared[key]))
        if defs:
            schema.setdefault("$defs", {}).update(defs)
        out.append((os.path.basename(name), json.dumps(schema).encode()))
    return out


def bundle_refs(node):
    """Rewrites references into the shared file as local `#/$defs/...` ones; yields their keys."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(KUBERNETES_SHARED):
            node["$ref"] = "#" + ref[len(KUBERNETES_SHARED):]
        if isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
            yield node["$ref"][len("#/$defs/"):]
        for k, v in node.items():
            if k != "$ref":
                yield from bundle_refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from bundle_refs(v)


def jsonschemabench(_wheels):
    """The three jsonschemabench folders next to the repository (the development set)."""
    root = os.path.join(ROOT, "..", "shared", "data", "jsonschemabench", "data")
    out = []
    for folder in ("Github_easy", "Github_trivial", "Glaiveai2K"):
        for name in sorted(os.listdir(os.path.join(root, folder))):
            with open(os.path.join(root, folder, name), "rb") as f:
                out.append((f"{folder}-{name}", f.read()))
    return out


SOURCES = {"schemastore": schemastore, "cloudformation": cloudformation, "kubernetes": kubernetes,
           "jsonschemabench": jsonschemabench}
DEFAULT_SOURCES = "schemastore,cloudformation,kubernetes"


def read_text(path):
    with open(path) as f:
        return f.read()


def refusal_keyword(stderr):
    m = re.search(r"keyword '([^']+)'", stderr)
    return m.group(1) if m else None


def try_afm(afm, path, n, sample, seed):
    """One schema through afm: a dict with the outcome (see main's tallies)."""
    r = subprocess.run([afm, "schema", "compile", "--schema", path, "--json"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        keyword = refusal_keyword(r.stderr) or ("budget" if "budget:" in r.stderr else None)
        ok = r.returncode == 1 and keyword is not None
        return {"compiled": False, "keyword": keyword, "crash": not ok,
                "error": r.stderr.strip().splitlines()[-1][:300] if r.stderr.strip() else ""}
    result = {"compiled": True, "instances": 0, "invalid": [], "unfinished": 0, "empty": False}
    if not sample:
        return result
    r = subprocess.run([afm, "schema", "sample", "--schema", path, "--tokenizer", SMALL_VOCAB,
                        "--n", str(n), "--seed", str(seed), "--max-tokens", "3000"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode == 1 and "admits no instance" in r.stderr:
        result["empty"] = True
        return result
    if r.returncode not in (0, 1):
        result["crash"] = True
        result["error"] = r.stderr.strip()[-300:]
    result["unfinished"] = r.stderr.count("reached --max-tokens")
    validator = schema_oracle.validator(read_text(path))
    for line in r.stdout.split("\n")[:-1]:
        result["instances"] += 1
        try:
            error = jsonschema.exceptions.best_match(
                validator.iter_errors(schema_oracle.loads(line)))
        except json.JSONDecodeError as e:
            error = e
        if error is not None:
            result["invalid"].append(f"{getattr(error, 'message', error)}"[:200] + " | " + line[:200])
    return result


EOS = 0  # <|endoftext|> in SMALL_VOCAB


def peer_engines():
    import guided_bench
    guided_bench.ensure_peers()
    return [guided_bench.Llguidance(SMALL_VOCAB, EOS), guided_bench.Xgrammar(SMALL_VOCAB, EOS)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="CMake build folder with afm")
    ap.add_argument("--cache", default="build/bench-cache/schemas")
    ap.add_argument("--sources", default=DEFAULT_SOURCES,
                    help=f"comma-separated, of {', '.join(SOURCES)}")
    ap.add_argument("--sample-matching", help="sample only schemas whose text matches this regex")
    ap.add_argument("--limit", type=int, default=0, help="schemas per source (seeded sample; 0: all)")
    ap.add_argument("--sample", type=int, default=200, help="compiled schemas sampled per source")
    ap.add_argument("--n", type=int, default=2, help="instances per sampled schema")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--peers", action="store_true", help="also compile with llguidance, XGrammar")
    ap.add_argument("--json", help="write every schema's outcome here")
    ap.add_argument("--list-refusals", action="store_true", help="print every refusal's message")
    args = ap.parse_args()

    afm = os.path.join(args.build, "afm")
    wheels = download_wheels(args.cache)
    peers = peer_engines() if args.peers else []
    rows, records = [], {}
    for source in args.sources.split(","):
        schemas = SOURCES[source](wheels)
        if args.limit and len(schemas) > args.limit:
            schemas = sorted(random.Random(args.seed).sample(schemas, args.limit))
        folder = os.path.join(args.cache, "schemas", source)
        os.makedirs(folder, exist_ok=True)
        paths = []
        for name, data in schemas:
            path = os.path.join(folder, name)
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
        rows.append(measure(source, paths, afm, peers, args, records))
    print_table(rows, peers)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


def measure(source, paths, afm, peers, args, records):
    sample_rng = random.Random(args.seed)
    candidates = range(len(paths))
    if args.sample_matching:
        wanted = re.compile(args.sample_matching)
        candidates = [i for i in candidates if wanted.search(read_text(paths[i]))]
    to_sample = set(sample_rng.sample(candidates, min(len(candidates), args.sample * 2)))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(try_afm, afm, p, args.n, i in to_sample, args.seed)
                   for i, p in enumerate(paths)]
        results = []
        for i, fut in enumerate(futures):
            results.append(fut.result())
            if (i + 1) % 100 == 0 or i + 1 == len(paths):
                print(f"\r{source}: {i + 1}/{len(paths)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    row = collections.Counter(schemas=len(paths))
    refusals = collections.Counter()
    sampled = 0
    for path, res in zip(paths, results):
        records[f"{source}/{os.path.basename(path)}"] = res
        if res.get("crash"):
            row["crash"] += 1
            print(f"FAILURE {source}/{os.path.basename(path)}: {res.get('error')}")
        if not res["compiled"]:
            refusals[res["keyword"]] += 1
            if args.list_refusals:
                print(f"refused {source}/{os.path.basename(path)}: {res['error']}")
            continue
        row["compiled"] += 1
        if "instances" in res and sampled < args.sample and (res["instances"] or res["empty"]):
            sampled += 1
            row["sampled"] += 1
            row["instances"] += res["instances"]
            row["invalid"] += len(res["invalid"])
            row["unfinished"] += res["unfinished"]
            row["empty"] += res["empty"]
            for bad in res["invalid"]:
                print(f"INVALID {source}/{os.path.basename(path)}: {bad}")
    for peer in peers:
        measure_peer(peer, source, paths, to_sample, args, row, records)
    row["source"] = source
    row["refusals"] = refusals
    return row


def measure_peer(peer, source, paths, to_sample, args, row, records):
    """A peer's compile count, and one instance walked from its own masks for each of up to
    --sample compiled schemas (bench/guided_enforcement.py), checked like afm's."""
    import guided_enforcement
    from tokenizers import Tokenizer
    hf = Tokenizer.from_file(SMALL_VOCAB)
    structural = guided_enforcement.structural_tokens(hf, hf.get_vocab_size(with_added_tokens=True))
    rng = random.Random(args.seed)
    walked = 0
    for i, path in enumerate(paths):
        text = read_text(path)
        try:
            compiled = peer.compile(text)
        except Exception:  # noqa: BLE001  (each engine has its own error types)
            records[f"{source}/{os.path.basename(path)}"][peer.name] = False
            continue
        row[peer.name] += 1
        records[f"{source}/{os.path.basename(path)}"][peer.name] = True
        if i not in to_sample or walked >= args.sample:
            continue
        walked += 1
        tokens = guided_enforcement.walk(peer, compiled, rng, structural, EOS, 3000)
        if tokens is None:
            row[f"{peer.name} unfinished"] += 1
            continue
        row[f"{peer.name} instances"] += 1
        try:
            verdict = guided_enforcement.verdict(text, hf.decode(tokens))
        except Exception:  # noqa: BLE001  (a pattern Python's re cannot read, in patternProperties)
            verdict = "oracle error"
        if verdict != "valid":
            row[f"{peer.name} invalid"] += 1
            print(f"{peer.name} {verdict.upper()} {source}/{os.path.basename(path)}: "
                  f"{hf.decode(tokens)[:200]}")


def print_table(rows, peers):
    head = "| source | schemas | afm compiles |" + "".join(f" {p.name} compiles |" for p in peers)
    print(head + " sampled | instances | invalid | empty language | walks at limit |")
    print("|---" * (head.count("|") + 4) + "|")
    for r in rows:
        pct = lambda k: f"{r[k]} ({100 * r[k] / max(r['schemas'], 1):.1f}%)"  # noqa: E731
        cells = [r["source"], str(r["schemas"]), pct("compiled")] + [pct(p.name) for p in peers]
        cells += [str(r[k]) for k in ("sampled", "instances", "invalid", "empty", "unfinished")]
        print("| " + " | ".join(cells) + " |")
    for p in peers:
        for r in rows:
            print(f"{p.name} on {r['source']}: {r[p.name + ' instances']} instances, "
                  f"{r[p.name + ' invalid']} invalid or not JSON, "
                  f"{r[p.name + ' unfinished']} walks at the limit")
    for r in rows:
        top = ", ".join(f"{k} {v}" for k, v in r["refusals"].most_common())
        print(f"{r['source']} refusals by keyword: {top or 'none'}")


if __name__ == "__main__":
    main()

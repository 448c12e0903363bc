"""Guided generation, single thread: afm vs llguidance vs XGrammar on jsonschemabench schemas.

Same tokenizer.json (a ~150k byte-level BPE trained here with `afm train tokenizer` on
`afm data corpus` text, cached), same schemas (a seeded sample of jsonschemabench; timed only
where all three compile), same token sequences (one instance per schema from a seeded afm random
walk through the masks, re-tokenized canonically with HF `tokenizers`). For each engine: schema
compile time, and the mask time at every position of every sequence. A position counts for an
engine only while that engine accepts the sequence's tokens (a rejection is reported).

The peers are installed into .venv from bench/requirements-guided.txt on first run, XGrammar
without its declared torch/transformers/triton dependencies: its C++ core and DLPack bitmasks
need none of them, so the two module names it imports at load time are stubbed here.

Usage: .venv/bin/python bench/guided_bench.py [--build build] [--cache build/bench-cache/guided]
                                              [--schemas 300] [--seed 1]
                                              [--tokenizer tokenizer.json | --gguf vocab.gguf]
--gguf takes the tokenizer of a GGUF file (e.g. llama.cpp's ggml-vocab-qwen2.gguf) and writes
it as a tokenizer.json (+ tokenizer_config.json with its EOS) under --cache first.

After the timing tables, a coverage table (bench/guided_enforcement.py): per engine, how many of
the sampled schemas it compiles and whether instances sampled from its own masks validate with
the `jsonschema` package. "rejected seqs" counts afm's instances a peer refused, and in
parentheses those holding a raw U+007F (valid JSON that llguidance only takes escaped).
XGrammar's grammar for untyped values (`{}`, a property without a schema) keeps ", " between
items even with separators=(",", ":"), so it refuses compact instances there.
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import time
import types

import guided_enforcement

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH_DIR)
DATA = os.path.join(ROOT, "..", "shared", "data", "jsonschemabench", "data")
FOLDERS = ["Github_easy", "Github_trivial", "Glaiveai2K"]


def stub_heavy_modules():
    """xgrammar imports torch and transformers at load time for type names and helpers this bench
    never calls; give it empty stand-ins (only when the real packages are absent). tvm_ffi is
    imported first: it probes torch itself and must see the real answer."""
    import tvm_ffi  # noqa: F401
    class Stub(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {"__init__": lambda self, *a, **k: None})
    for name in ("torch", "transformers"):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = Stub(name)


def ensure_peers():
    try:
        import llguidance  # noqa: F401
        import xgrammar  # noqa: F401
        return
    except ImportError:
        pass
    req = os.path.join(BENCH_DIR, "requirements-guided.txt")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-r", req],
                   check=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def ensure_tokenizer(afm, cache, vocab_size):
    out = os.path.join(cache, f"tokenizer-{vocab_size}")
    path = os.path.join(out, "tokenizer.json")
    if os.path.exists(path):
        return path
    corpus = os.path.join(cache, "corpus")
    if not glob.glob(os.path.join(corpus, "*.txt")):
        print("building the training corpus (afm data corpus)...", file=sys.stderr)
        run([afm, "data", "corpus", "--out", corpus])
    inputs = sorted(glob.glob(os.path.join(corpus, "*.txt")))
    print(f"training a {vocab_size}-token tokenizer on {len(inputs)} files...", file=sys.stderr)
    run([afm, "train", "tokenizer", "--input", *inputs, "--vocab-size", str(vocab_size),
         "--out", out, "-t", "1"])
    return path


QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"
               r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def tokenizer_from_gguf(gguf_path, cache):
    """A byte-level BPE GGUF tokenizer (tokens, merges, token types, EOS) as tokenizer.json."""
    from gguf import GGUFReader
    reader = GGUFReader(gguf_path)

    def strings(name):
        f = reader.fields[name]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    def scalar(name):
        f = reader.fields.get(name)
        return None if f is None else int(f.parts[f.data[0]][0])

    tokens = strings("tokenizer.ggml.tokens")
    merges = strings("tokenizer.ggml.merges")
    f = reader.fields["tokenizer.ggml.token_type"]
    types = [int(f.parts[i][0]) for i in f.data]
    eos = scalar("tokenizer.ggml.eos_token_id")
    special = [i for i, t in enumerate(types) if t in (3, 4)]  # control, user-defined
    special_set = set(special)
    out = os.path.join(cache, "gguf-" + os.path.splitext(os.path.basename(gguf_path))[0])
    os.makedirs(out, exist_ok=True)
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": tokens[i], "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for i in special],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2_SPLIT}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens) if i not in special_set},
                  "merges": merges},
    }
    with open(os.path.join(out, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": tokens[eos] if eos is not None else None}, f, ensure_ascii=False)
    return os.path.join(out, "tokenizer.json")


def afm_compiles(driver, tokenizer, schema, cache):
    path = os.path.join(cache, "probe.json")
    with open(path, "w") as f:
        json.dump([{"name": "probe", "schema": schema, "tokens": []}], f)
    return json.loads(run([driver, tokenizer, path]))["ok"]


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


class Llguidance:
    name = "llguidance"

    def __init__(self, tokenizer_json, eos):
        import llguidance
        import llguidance.numpy
        import numpy as np
        self.ll, self.np = llguidance, np
        self.tok = llguidance.LLTokenizer(open(tokenizer_json).read(), eos_token=eos)
        self.mask = llguidance.numpy.allocate_token_bitmask(1, self.tok.vocab_size)
        self.fill = llguidance.numpy.fill_next_token_bitmask

    def compile(self, schema):
        grammar = self.ll.LLMatcher.grammar_from_json_schema(
            schema, defaults={"whitespace_flexible": False, "item_separator": ",",
                             "key_separator": ":"})
        m = self.ll.LLMatcher(self.tok, grammar, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return grammar

    def matcher(self, compiled):
        return self.ll.LLMatcher(self.tok, compiled, log_level=0)

    def time_mask(self, m):
        t0 = time.perf_counter_ns()
        self.fill(m, self.mask)
        return (time.perf_counter_ns() - t0) / 1000

    def allowed(self, m, token):
        return (int(self.mask[0, token >> 5]) >> (token & 31)) & 1 and m.consume_token(token)


class Xgrammar:
    name = "XGrammar"

    def __init__(self, tokenizer_json, eos):
        stub_heavy_modules()
        import numpy as np
        import xgrammar as xgr
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(tokenizer_json)
        n = tok.get_vocab_size(with_added_tokens=True)
        vocab = [b""] * n
        decode = byte_decoder()
        for piece, i in tok.get_vocab(with_added_tokens=True).items():
            vocab[i] = bytes(decode[c] for c in piece) if all(c in decode for c in piece) \
                else piece.encode()
        self.xgr = xgr
        info = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW, vocab_size=n,
                                 stop_token_ids=[eos])
        self.compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        self.mask = np.zeros((1, (n + 31) // 32), dtype=np.int32)

    def compile(self, schema):
        return self.compiler.compile_json_schema(schema, any_whitespace=False,
                                                separators=(",", ":"), strict_mode=False)

    def matcher(self, compiled):
        return self.xgr.GrammarMatcher(compiled)

    def time_mask(self, m):
        t0 = time.perf_counter_ns()
        m.fill_next_token_bitmask(self.mask, 0)
        return (time.perf_counter_ns() - t0) / 1000

    def allowed(self, m, token):
        return (int(self.mask[0, token >> 5]) >> (token & 31)) & 1 and m.accept_token(token)


def byte_decoder():
    """GPT-2's byte-level alphabet: the code point that stands for each byte, inverted."""
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def time_peer(engine, tasks):
    """Compile times (us) and mask times (us) over tasks; counts of rejected sequences, and of
    those the ones whose text holds a raw U+007F (valid JSON; llguidance wants it escaped)."""
    compile_us, mask_us, rejected, rejected_del = [], [], 0, 0
    for task in tasks:
        t0 = time.perf_counter_ns()
        compiled = engine.compile(task["schema"])
        engine.matcher(compiled)
        compile_us.append((time.perf_counter_ns() - t0) / 1000)
        for seq in task["tokens"]:
            m = engine.matcher(compiled)
            for i in range(len(seq) + 1):
                mask_us.append(engine.time_mask(m))
                if i < len(seq) and not engine.allowed(m, seq[i]):
                    rejected += 1
                    rejected_del += "\x7f" in task["text"]
                    break
    return compile_us, mask_us, rejected, rejected_del


def time_afm(driver, tokenizer, tasks, cache, passes=1, warm=None):
    """Cold masks (first request per compiled grammar); with passes > 1 the masks of the later
    passes (fresh matchers of the same grammar, sharing its mask cache) go into `warm`."""
    path = os.path.join(cache, "tasks.json")
    with open(path, "w") as f:
        json.dump(tasks, f)
    cmd = [driver, tokenizer, path] + (["--passes", str(passes)] if passes > 1 else [])
    compile_us, mask_us, rejected = [], [], 0
    for line in run(cmd).splitlines():
        r = json.loads(line)
        compile_us.append(r["compile_us"])
        mask_us += r["mask_us"]
        rejected += r["rejected"]
        if warm is not None:
            warm += r.get("mask_us_warm", [])
    return compile_us, mask_us, rejected


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="CMake build folder with afm and the bench")
    ap.add_argument("--cache", default="build/bench-cache/guided")
    ap.add_argument("--schemas", type=int, default=300, help="schemas sampled (before filtering)")
    ap.add_argument("--vocab-size", type=int, default=150000)
    ap.add_argument("--tokenizer", help="use this tokenizer.json instead of training one")
    ap.add_argument("--gguf", help="use the tokenizer of this GGUF file instead of training one")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=400, help="longest sampled instance")
    ap.add_argument("--passes", type=int, default=2,
                    help="afm runs each sequence this often; passes after the first are reported "
                         "as warm (a later request with the same compiled grammar)")
    args = ap.parse_args()
    os.environ["RAYON_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    afm = os.path.join(args.build, "tools", "afm", "afm")
    if not os.path.exists(afm):
        afm = os.path.join(args.build, "afm")
    driver = os.path.join(args.build, "bench", "guided_bench")
    os.makedirs(args.cache, exist_ok=True)
    ensure_peers()
    if args.gguf:
        tokenizer = tokenizer_from_gguf(args.gguf, args.cache)
    else:
        tokenizer = args.tokenizer or ensure_tokenizer(afm, args.cache, args.vocab_size)
    from tokenizers import Tokenizer
    hf = Tokenizer.from_file(tokenizer)
    vocab_size = hf.get_vocab_size(with_added_tokens=True)
    # The EOS that afm reads (tokenizer_config.json's eos_token) for the peers too.
    config = os.path.join(os.path.dirname(tokenizer), "tokenizer_config.json")
    eos_name = json.load(open(config)).get("eos_token") if os.path.exists(config) else None
    eos_name = eos_name.get("content") if isinstance(eos_name, dict) else eos_name
    eos = hf.token_to_id(eos_name) if eos_name else None
    eos = eos if eos is not None else 0

    files = sorted(f for d in FOLDERS for f in glob.glob(os.path.join(DATA, d, "*.json")))
    picked = random.Random(args.seed).sample(files, min(args.schemas, len(files)))
    afm_texts = {}
    engines = [Llguidance(tokenizer, eos), Xgrammar(tokenizer, eos)]
    compiles = {"afm": 0, "llguidance": 0, "XGrammar": 0}
    tasks = []
    for i, path in enumerate(picked):
        schema = open(path).read()
        text = ""
        for attempt in range(3):  # uniform walks can run long; try a few seeds
            try:
                text = run([driver, tokenizer, "--sample", path,
                            str(args.seed * 1000003 + i * 7 + attempt), str(args.max_tokens)],
                           timeout=300)
                break
            except subprocess.CalledProcessError:
                pass
        ok = bool(text)
        if text:
            afm_texts[os.path.relpath(path, DATA)] = text
        compiles["afm"] += afm_compiles(driver, tokenizer, schema, args.cache)
        for engine in engines:
            try:
                engine.compile(schema)
                compiles[engine.name] += 1
            except Exception:  # noqa: BLE001 (peers raise several kinds)
                ok = False
        if ok:
            tasks.append({"name": os.path.relpath(path, DATA), "schema": schema, "text": text,
                          "tokens": [hf.encode(text, add_special_tokens=False).ids]})
    warm = []
    results = {"afm": time_afm(driver, tokenizer, tasks, args.cache, args.passes, warm)}
    for engine in engines:
        results[engine.name] = time_peer(engine, tasks)

    n_pos = len(results["afm"][1])
    print(f"vocabulary: {vocab_size} tokens; schemas sampled: {len(picked)} (seed {args.seed}); "
          f"compiled: " + ", ".join(f"{k} {v}" for k, v in compiles.items()) +
          f"; timed (all three compile, instance sampled): {len(tasks)} schemas, "
          f"{sum(len(t['tokens'][0]) for t in tasks)} tokens, {n_pos} afm masks")
    print()
    print("| engine | compile p50 | compile p99 | mask p50 | mask p99 | masks | rejected seqs "
          "(raw U+007F) |")
    print("|---|---|---|---|---|---|---|")
    base = results["afm"]
    for name, (c, m, rej, *rest) in results.items():
        rej_del = rest[0] if rest else 0
        print(f"| {name} | {percentile(c, 50) / 1000:.2f} ms | {percentile(c, 99) / 1000:.2f} ms "
              f"| {percentile(m, 50):.1f} us | {percentile(m, 99):.1f} us | {len(m)} "
              f"| {rej} ({rej_del}) |")
    if warm:
        print(f"| afm, warm (request 2+, same compiled grammar) | | | "
              f"{percentile(warm, 50):.1f} us | {percentile(warm, 99):.1f} us | {len(warm)} | |")
    print()
    print("| ratio (peer / afm) | compile p50 | compile p99 | mask p50 | mask p99 |")
    print("|---|---|---|---|---|")
    for name, (c, m, *_) in results.items():
        if name == "afm":
            continue
        r = [percentile(c, 50) / percentile(base[0], 50), percentile(c, 99) / percentile(base[0], 99),
             percentile(m, 50) / percentile(base[1], 50), percentile(m, 99) / percentile(base[1], 99)]
        print(f"| {name} | " + " | ".join(f"{x:.1f}x" for x in r) + " |")
    print_enforcement(engines, picked, afm_texts, compiles, hf, eos, args)


def print_enforcement(engines, picked, afm_texts, compiles, hf, eos, args):
    """Coverage beside speed: what each engine compiles, and whether its own output is valid."""
    schemas = [(os.path.relpath(p, DATA), open(p).read()) for p in picked]
    rows = guided_enforcement.enforcement(engines, schemas, afm_texts, hf, eos, args.max_tokens,
                                          args.seed)
    rows["afm"]["compiled"] = compiles["afm"]
    print()
    print("| engine | compiled | own instances | invalid | walks at the token limit |")
    print("|---|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['compiled']} of {len(picked)} | {row['instances']} "
              f"| {row['invalid']} | {row['unfinished']} |")
    for name, row in rows.items():
        for example in row["examples"][:5]:
            print(f"invalid ({name}): {example}")


if __name__ == "__main__":
    main()

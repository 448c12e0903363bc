"""BPE tokenizer training time: `afm train tokenizer` vs Hugging Face `tokenizers` BpeTrainer.

Same corpus, same pre-tokenizer (Qwen2 split regex + byte-level), same vocabulary size, same
special tokens (afm's five), min_frequency 2, same thread count (afm -t N; HF
RAYON_NUM_THREADS=N). Runs alternate afm / HF / HF-iterator and each is a fresh process; the
table gives the median wall time of each (reading the files, training, writing tokenizer.json)
and its peak resident memory.

HF is measured two ways: `Tokenizer.train(files)` (HF's own file reader; it feeds the trainer
one line at a time) and `train_from_iterator` over whole files (the documents afm sees, so its
merges can be compared with afm's: the count of leading merges that agree is printed).

Corpus (nothing downloaded; built from text already on a Debian machine, files that are valid
UTF-8 without NUL bytes or special-token strings or characters unassigned in this Python's
Unicode tables, duplicates by content dropped, taken in this order until --mb): this
repository's docs, sources and tests, the Python standard library's .py files, then the text
files under /usr/share/doc (copyright notices, changelogs, READMEs, HTML and Markdown manuals).

Usage: .venv/bin/python bench/tokenizer_train_bench.py [--afm build/afm] [--mb 30]
       [--vocab 32000] [--threads 2] [--runs 3]
"""
import argparse
import glob
import hashlib
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import unicodedata

HF_SCRIPT = r"""
import json, sys
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
mode, list_path, regex, vocab, out = sys.argv[1:6]
specials = ["<|endoftext|>", "<turn_start>", "<turn_end>", "<executable_start>", "<executable_end>"]
files = open(list_path, encoding="utf-8").read().split("\n")[:-1]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(regex), behavior="isolated"),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=int(vocab), min_frequency=2, special_tokens=specials,
                              show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
if mode == "files":
    tok.train(files, trainer)
else:
    def documents():
        for path in files:
            with open(path, encoding="utf-8", newline="") as f:  # keep "\r\n" as is
                yield f.read()
    tok.train_from_iterator(documents(), trainer)
tok.save(out)
"""

QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
         r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<turn_start>", "<turn_end>", "<executable_start>", "<executable_end>"]


def candidate_files():
    repo = sorted(f for pattern in ("docs/*.md", "README.md", "src/**/*.[ch]*", "tools/**/*.cpp",
                                    "tests/**/*.py", "tests/**/*.cpp", "bench/*.py")
                  for f in glob.glob(pattern, recursive=True))
    stdlib = sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "**", "*.py"),
                              recursive=True))
    docs = sorted(f for f in glob.glob("/usr/share/doc/**/*", recursive=True)
                  if not f.endswith((".gz", ".png", ".gif", ".jpg", ".svg", ".pdf")))
    return repo + stdlib + docs


def build_corpus(limit_bytes, folder):
    """Copies usable text files, in order, into folder until limit_bytes (no two with the same
    bytes), so every trainer reads the same bytes; returns the copies' paths and their size."""
    seen, paths, total = set(), [], 0
    for path in candidate_files():
        if total >= limit_bytes:
            break
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            continue
        with open(path, "rb") as f:
            data = f.read()
        digest = hashlib.sha1(data).digest()
        if b"\0" in data or digest in seen or any(s.encode() in data for s in SPECIALS):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if any(unicodedata.category(c) == "Cn" for c in set(text)):
            continue  # characters newer than PCRE2's Unicode tables: afm and HF split them apart
        seen.add(digest)
        paths.append(os.path.join(folder, f"{len(paths):05d}.txt"))
        with open(paths[-1], "wb") as f:
            f.write(data)
        total += len(data)
    return paths, total


def timed(cmd, env):
    """Runs cmd; returns (wall seconds, peak RSS in MB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    out, err = proc.communicate()
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd[:3])} ...\n{err.decode()}")
    return seconds, usage.ru_maxrss / 1024


def merges_of(path):
    with open(path, encoding="utf-8") as f:
        merges = json.load(f)["model"]["merges"]
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]


def leading_agreement(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--afm", default="build/afm")
    ap.add_argument("--mb", type=float, default=30)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads), TOKENIZERS_PARALLELISM="true")
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "corpus"))
        paths, total = build_corpus(int(args.mb * 1e6), os.path.join(tmp, "corpus"))
        list_path = os.path.join(tmp, "files.txt")
        with open(list_path, "w", encoding="utf-8") as f:
            f.write("".join(p + "\n" for p in paths))
        commands = {
            "afm train tokenizer": [args.afm, "train", "tokenizer", "--input-list", list_path,
                                    "--vocab-size", str(args.vocab), "--out",
                                    os.path.join(tmp, "afm"), "-t", str(args.threads)],
            "HF BpeTrainer, train(files)": [sys.executable, "-c", HF_SCRIPT, "files", list_path,
                                            QWEN2, str(args.vocab), os.path.join(tmp, "hf.json")],
            "HF BpeTrainer, train_from_iterator(whole files)": [
                sys.executable, "-c", HF_SCRIPT, "iterator", list_path, QWEN2, str(args.vocab),
                os.path.join(tmp, "hf_docs.json")],
        }
        times = {name: [] for name in commands}
        rss = {name: 0.0 for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                seconds, peak = timed(cmd, env)
                times[name].append(seconds)
                rss[name] = max(rss[name], peak)
        agree = leading_agreement(merges_of(os.path.join(tmp, "afm", "tokenizer.json")),
                                  merges_of(os.path.join(tmp, "hf_docs.json")))
        n_merges = len(merges_of(os.path.join(tmp, "afm", "tokenizer.json")))

    afm_median = statistics.median(times["afm train tokenizer"])
    print(f"corpus: {len(paths)} files, {total / 1e6:.1f} MB; vocab {args.vocab}; "
          f"{args.threads} threads; {args.runs} runs each, interleaved\n")
    print("| trainer | median s | runs (s) | peak RSS MB | time / afm |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        runs = ", ".join(f"{t:.2f}" for t in ts)
        print(f"| {name} | {med:.2f} | {runs} | {rss[name]:.0f} | {med / afm_median:.2f} |")
    print(f"\nafm's merges equal HF train_from_iterator's for the first {agree} of {n_merges}")


if __name__ == "__main__":
    main()

"""Single-thread encode throughput: afm vs Hugging Face `tokenizers`, same text, same vocab.

Both encode the same ~1.1 MB of mixed multilingual text (tests/oracle/make_tokenizer_fixtures
mixed_text) line by line, one thread, warm (a first untimed pass fills caches on both sides).
Vocabularies: the committed test fixtures (4k) and a 50k byte-level BPE (Qwen2 regex) trained
here at run time on a different sample of the same generator.

Usage: .venv/bin/python bench/tokenizer_bench.py [--afm build/bench/tokenizer_bench_cpp]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
from tokenizers import Tokenizer, Regex, decoders, models, pre_tokenizers  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "oracle"))
from make_tokenizer_fixtures import QWEN2, SPECIALS, byte_level, mixed_text  # noqa: E402


def train_large(path):
    tok, trainer = byte_level(QWEN2, SPECIALS, vocab_size=50000)
    tok.train_from_iterator(mixed_text(seed=11, min_bytes=3_000_000), trainer)
    tok.save(path)


def real_qwen2_vocab(path):
    """Qwen2's real 151k vocabulary (llama.cpp's test GGUF, extracted by scripts/setup --tests), rebuilt
    as a tokenizer.json for both sides. None when absent."""
    src = ".venv/llama-vocab/ggml-vocab-qwen2.gguf"
    if not os.path.exists(src):
        return None
    import gguf
    r = gguf.GGUFReader(src)
    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    types = r.fields["tokenizer.ggml.token_type"].contents()
    merges = [tuple(m.split(" ", 1)) for m in r.fields["tokenizer.ggml.merges"].contents()]
    vocab = {t: i for i, t in enumerate(tokens) if types[i] not in (3, 4)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    from tokenizers import AddedToken
    tok.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False)
                            for i in range(len(tokens)) if types[i] == 3])
    tok.save(path)
    return path


def hf_seconds(path, lines, repeats):
    tok = Tokenizer.from_file(path)
    for line in lines:  # warm-up
        tok.encode(line, add_special_tokens=False)
    best = float("inf")
    for _ in range(repeats):  # HF's fastest single-thread path of the two: per line or batch
        t0 = time.perf_counter()
        for line in lines:
            tok.encode(line, add_special_tokens=False)
        best = min(best, time.perf_counter() - t0)
        t0 = time.perf_counter()
        tok.encode_batch(lines, add_special_tokens=False)
        best = min(best, time.perf_counter() - t0)
    return best


def afm_seconds(binary, path, text_file, repeats):
    out = subprocess.run([binary, path, text_file, str(repeats)], check=True, capture_output=True,
                         text=True).stdout
    return float(out.split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--afm", default="build/bench/tokenizer_bench")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    lines = mixed_text()
    nbytes = sum(len(l.encode()) + 1 for l in lines)
    with tempfile.TemporaryDirectory() as tmp:
        text_file = os.path.join(tmp, "text.txt")
        with open(text_file, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        large = os.path.join(tmp, "tokenizer.json")
        train_large(large)
        vocabs = [(n, f"tests/data/tokenizer/{n}/tokenizer.json") for n in ("gpt2", "llama3", "qwen2")]
        vocabs.append(("trained-50k", large))
        real = real_qwen2_vocab(os.path.join(tmp, "qwen2-real.json"))
        if real:
            vocabs.append(("qwen2-151k (real)", real))
        print(f"text: {len(lines)} lines, {nbytes / 1e6:.2f} MB; single thread; best of {args.repeats}")
        print("| vocab | afm MB/s | HF tokenizers MB/s | afm / HF |")
        print("|---|---|---|---|")
        for name, path in vocabs:
            hf = hf_seconds(path, lines, args.repeats)
            ours = afm_seconds(args.afm, path, text_file, args.repeats)
            print(f"| {name} | {nbytes / ours / 1e6:.1f} | {nbytes / hf / 1e6:.1f} | {hf / ours:.2f}x |")


if __name__ == "__main__":
    main()

"""`afm train tokenizer` against Hugging Face `tokenizers`.

Trains on the repository's own docs and C++ sources plus a generated multilingual text (with
afm special tokens mid-text), at two vocabulary sizes and with each pre-tokenizer, then checks:
  1. HF loads the written tokenizer.json, and its vocabulary and merges are the ones afm wrote;
  2. HF's encoding of held-out lines (other seed: unicode, emoji, digits, whitespace runs,
     special tokens) equals `afm tokenize --json --lines`, and HF decodes them back exactly;
  3. HF's own BpeTrainer, given the same documents cut at the special tokens, learns exactly the
     same vocabulary and merges in the same order (same counts, same tie-break);
  4. Input errors exit 1 with one line on stderr naming the problem.

Usage: trainer_parity_test.py (CTest sets AFM_BIN to the afm CLI).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "oracle"))
from make_tokenizer_fixtures import LLAMA3, QWEN2, mixed_text  # noqa: E402

AFM = os.environ["AFM_BIN"]
AFM_SPECIALS = ["<|endoftext|>", "<turn_start>", "<turn_end>", "<executable_start>",
                "<executable_end>"]
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
REGEXES = {"qwen2": QWEN2, "gpt2": GPT2, "llama3": LLAMA3}
# (pre-tokenizer, vocab size): every regex at 1000, the default one also at 5000.
RUNS = [("qwen2", 1000), ("qwen2", 5000), ("gpt2", 1000), ("llama3", 1000)]


def run_afm(*args):
    return subprocess.run([AFM, *args], capture_output=True, text=True)


def training_files(tmp):
    """The repo's docs and C++ sources (a few hundred KB), copied so that both trainers read the
    same bytes, and a generated multilingual file."""
    sources = sorted(glob.glob("docs/*.md") + glob.glob("src/**/*.h", recursive=True) +
                     glob.glob("src/**/*.cpp", recursive=True))
    os.makedirs(os.path.join(tmp, "corpus"))
    files = []
    for i, src in enumerate(sources):
        files.append(os.path.join(tmp, "corpus", f"{i:05d}.txt"))
        shutil.copyfile(src, files[-1])
    generated = os.path.join(tmp, "mixed.txt")
    with open(generated, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(mixed_text(seed=11, min_bytes=200_000)) + "\n")
    files.append(generated)
    assert sum(os.path.getsize(f) for f in files) > 400_000
    return files


def held_out_lines():
    lines = mixed_text(seed=2025, min_bytes=400_000)
    lines += ["", " ", "   x", "\t\tindented", "12345678901234567890", "x = 1_000_000 + 0.25",
              "<|endoftext|><turn_start> user\nnot a newline here<turn_end>",
              "<executable_start> ```function\n[]```<executable_end>", "🙂" * 7,
              "ｆｕｌｌｗｉｄｔｈ　ideographic　space", "tabs\tand\u00a0nbsp  end  "]
    return [line.replace("\n", " ") for line in lines]


def segments(text):
    """The text between special-token occurrences (what the trainer learns from)."""
    pattern = "|".join(re.escape(s) for s in sorted(AFM_SPECIALS, key=len, reverse=True))
    return [s for s in re.split(pattern, text) if s]


def hf_trained(files, regex, vocab_size):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2,
                                  special_tokens=AFM_SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    docs = []
    for path in files:
        with open(path, encoding="utf-8", newline="") as f:  # keep "\r\n" as is
            docs += segments(f.read())
    tok.train_from_iterator(docs, trainer)
    return json.loads(tok.to_str())["model"]


def as_pairs(merges):
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]


def check_merges_match_hf(name, ours, files, regex, vocab_size):
    hf = hf_trained(files, regex, vocab_size)
    theirs, mine = as_pairs(hf["merges"]), as_pairs(ours["model"]["merges"])
    bad = next((i for i in range(max(len(mine), len(theirs)))
                if i >= len(mine) or i >= len(theirs) or mine[i] != theirs[i]), None)
    assert bad is None, (f"{name}: merge {bad} of {len(mine)} (HF {len(theirs)}) differs: "
                         f"afm {mine[bad:bad + 3]} hf {theirs[bad:bad + 3]}")
    assert ours["model"]["vocab"] == hf["vocab"], name
    return len(theirs)


def check_encodings(name, path, lines, text_file):
    hf = Tokenizer.from_file(path)
    want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    r = run_afm("tokenize", "--tokenizer", path, "-f", text_file, "--json", "--lines")
    assert r.returncode == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(got) == len(want), (name, len(got), len(want))
    bad = [i for i in range(len(want)) if got[i] != want[i]]
    assert not bad, (f"{name}: {len(bad)} of {len(want)} lines differ; first: {lines[bad[0]]!r}"
                     f"\n afm {got[bad[0]]}\n hf  {want[bad[0]]}")
    for line, ids in zip(lines, want):
        assert hf.decode(ids, skip_special_tokens=False) == line, (name, line)
    assert hf.token_to_id("<turn_start>") == 1 and hf.token_to_id("<|endoftext|>") == 0


def check_errors(tmp, files):
    missing = run_afm("train", "tokenizer", "--input", os.path.join(tmp, "missing.txt"),
                      "--vocab-size", "1000", "--out", os.path.join(tmp, "x"))
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1, missing.stderr
    assert "missing.txt" in missing.stderr, missing.stderr
    small = run_afm("train", "tokenizer", "--input", files[0], "--vocab-size", "100",
                    "--out", os.path.join(tmp, "x"))
    assert small.returncode == 1 and "vocab size 100" in small.stderr, small.stderr
    assert not os.path.exists(os.path.join(tmp, "x", "tokenizer.json"))
    usage = run_afm("train", "tokenizer", "--input", files[0])
    assert usage.returncode != 0 and "required" in usage.stderr.lower(), usage.stderr


def main():
    lines = held_out_lines()
    with tempfile.TemporaryDirectory() as tmp:
        files = training_files(tmp)
        text_file = os.path.join(tmp, "held_out.txt")
        with open(text_file, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
        check_errors(tmp, files)
        for pre, vocab_size in RUNS:
            name = f"{pre}/{vocab_size}"
            out = os.path.join(tmp, f"{pre}_{vocab_size}")
            r = run_afm("train", "tokenizer", "--input", *files, "--vocab-size", str(vocab_size),
                        "--pre-tokenizer", pre, "--out", out, "-t", "2", "--json")
            assert r.returncode == 0, r.stderr
            summary = json.loads(r.stdout)
            assert summary["vocab_size"] == vocab_size, summary
            path = os.path.join(out, "tokenizer.json")
            with open(path, encoding="utf-8") as f:
                ours = json.load(f)
            hf_model = json.loads(Tokenizer.from_file(path).to_str())["model"]
            assert hf_model["vocab"] == ours["model"]["vocab"], name
            assert as_pairs(hf_model["merges"]) == as_pairs(ours["model"]["merges"]), name
            check_encodings(name, path, lines, text_file)
            merges = check_merges_match_hf(name, ours, files, REGEXES[pre], vocab_size)
            print(f"{name}: {len(lines)} held-out lines identical; the {merges} merges and the "
                  f"vocabulary equal HF BpeTrainer's")
    print("tokenizer trainer parity: ok")


if __name__ == "__main__":
    main()

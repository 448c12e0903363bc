"""Regenerates tests/data/tokenizer/<name>/tokenizer.json with Hugging Face `tokenizers`, and
provides mixed_text(): the deterministic >= 1 MB multilingual corpus the parity test and the
benchmark use (synthesized from a seed, nothing downloaded).

Vocabularies: gpt2 (ByteLevel regex), llama3 (Llama-3 split regex, ignore_merges), qwen2 (Qwen2
split regex, single digits), spm (SentencePiece-style BPE: Metaspace, byte fallback).
Run from the repository root: .venv/bin/python tests/oracle/make_tokenizer_fixtures.py
"""
import json
import os
import random

from tokenizers import Tokenizer, Regex, decoders, models, pre_tokenizers, trainers

ROOT = "tests/data/tokenizer"
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<turn_start>", "<turn_end>"]
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
         r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

WORDS = {
    "en": "the quick brown fox jumps over lazy dog it's we're they'll I'm you've she'd HELLO World "
          "language model tokenizer streaming structured output tool calling session".split(),
    "fr": "ça va très bien élève garçon où déjà naïve Noël cœur".split(),
    "de": "Grüße Straße Mädchen über schön Fußgänger ÄÖÜ".split(),
    "ru": "Привет мир как дела хорошо спасибо Москва".split(),
    "el": "Γειά σου κόσμε καλημέρα ευχαριστώ".split(),
    "zh": "你好 世界 模型 语言 中文 测试 北京".split(),
    "ja": "こんにちは 世界 カタカナ ひらがな 日本語".split(),
    "ar": "مرحبا بالعالم شكرا كيف حالك".split(),
    "hi": "नमस्ते दुनिया धन्यवाद भाषा".split(),
    "th": "สวัสดี ชาวโลก ขอบคุณ ภาษา".split(),
    "ko": "안녕하세요 세계 감사합니다".split(),
}
EMOJI = ["🙂", "👍🏽", "👩‍👩‍👧‍👦", "🇫🇷", "🇯🇵", "❤️", "🧑🏿‍💻", "✨", "🏳️‍🌈"]
CODE = ["def f(x):\n    return x ** 2  # square", "for (int i = 0; i < n; ++i) { sum += a[i]; }",
        "SELECT id, name FROM users WHERE age >= 18;", "{\"key\": [1, 2.5, true, null]}",
        "<div class=\"x\">&amp;</div>", "if err != nil {\n\treturn err\n}"]


def sentence(rng):
    lang = rng.choice(list(WORDS))
    words = [rng.choice(WORDS[lang]) for _ in range(rng.randint(3, 12))]
    out = []
    for w in words:
        r = rng.random()
        if r < 0.05:
            w = w.upper()
        elif r < 0.08:
            w += rng.choice(["'s", "'ll", "'S", "'RE", "n't"])
        out.append(w)
    s = " ".join(out)
    extras = [lambda: str(rng.randint(0, 10 ** rng.randint(1, 12))), lambda: rng.choice(EMOJI),
              lambda: " " * rng.randint(2, 9), lambda: "\t" * rng.randint(1, 3),
              lambda: " \u00a0\u3000 ", lambda: rng.choice(SPECIALS),
              lambda: rng.choice(CODE).replace("\n", " "), lambda: "".join(rng.choice("!?.,;:-_()[]{}\"'`~@#$%^&*+=<>/\\|") for _ in range(rng.randint(1, 5))),
              lambda: f"{rng.randint(1, 31)}/{rng.randint(1, 12)}/{rng.randint(1900, 2100)}",
              lambda: chr(rng.randint(0x20, 0x2FFF))]
    for _ in range(rng.randint(0, 4)):
        pos = rng.randint(0, len(s))
        s = s[:pos] + rng.choice(extras)() + s[pos:]
    return s + rng.choice(["", ".", "!", "?", " ", "  ", "\t"])


def mixed_text(seed=2025, min_bytes=1_100_000):
    """Lines of mixed text (no '\n' inside a line; lines may start/end with whitespace)."""
    rng = random.Random(seed)
    lines, size = [], 0
    while size < min_bytes:
        line = " ".join(sentence(rng) for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.1:
            line = " " * rng.randint(1, 4) + line
        lines.append(line)
        size += len(line.encode()) + 1
    return lines


def byte_level(regex, specials=SPECIALS, vocab_size=4000):
    """An untrained byte-level BPE (GPT-2's ByteLevel regex when regex is None) and its trainer."""
    tok = Tokenizer(models.BPE())
    if regex is None:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(regex), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    return tok, trainer


def sentencepiece():
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    tok.decoder = decoders.Sequence([decoders.Metaspace(replacement="▁", prepend_scheme="always", split=False),
                                     decoders.ByteFallback(), decoders.Fuse()])
    bytes_tokens = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=3000, special_tokens=["<unk>", "<s>", "</s>"] + SPECIALS + bytes_tokens,
                                  show_progress=False)
    return tok, trainer


def build(name, tok, trainer, train_lines):
    tok.train_from_iterator(train_lines, trainer)
    out = os.path.join(ROOT, name)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "tokenizer.json")
    tok.save(path)
    if name == "llama3":
        j = json.load(open(path))
        j["model"]["ignore_merges"] = True
        json.dump(j, open(path, "w"), ensure_ascii=False, indent=1)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": "<|im_end|>" if name != "spm" else "</s>", "add_bos_token": False,
                   "chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"},
                  f, indent=1)


def main():
    train = mixed_text(seed=7, min_bytes=300_000)  # a different sample than the test corpus
    build("gpt2", *byte_level(None), train)
    build("llama3", *byte_level(LLAMA3), train)
    build("qwen2", *byte_level(QWEN2), train)
    build("spm", *sentencepiece(), train)
    os.makedirs(os.path.join(ROOT, "fuzz_corpus"), exist_ok=True)
    tiny = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            "added_tokens": [{"id": 3, "content": "<s>", "special": True}]}
    with open(os.path.join(ROOT, "fuzz_corpus", "tiny.json"), "w") as f:
        json.dump(tiny, f)


if __name__ == "__main__":
    main()

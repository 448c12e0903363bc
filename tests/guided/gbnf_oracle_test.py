"""GBNF grammars against llama.cpp's own grammar parser and matcher (llama-cpp-python).

(a) Parse agreement: each grammar text either compiles with `afm schema compile --grammar`
    and with llama.cpp, or fails in both; the documented differences (left recursion, a rule
    defined twice, a rule that can never finish, a line starting with '|') are listed with
    their expected verdicts.
(b) Same language: for every grammar in tests/data/gbnf, `afm schema sample --grammar` prints
    instances (random walks through our masks); llama.cpp's grammar sampler must accept each
    one, byte token by byte token, and allow end-of-text after it.
llama.cpp needs a vocabulary to build a grammar sampler: the 400-token byte-level Qwen2 test
model, converted to GGUF by `afm convert` (vocab only is loaded). Skipped with a printed
reason when llama_cpp is not installed.
"""
import ctypes
import os
import subprocess
import sys
import tempfile
from pathlib import Path

AFM = os.environ["AFM_BIN"]
ROOT = Path(os.environ.get("AFM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
HF_MODEL = ROOT / "tests/data/hf/qwen2"
GRAMMARS = sorted((ROOT / "tests/data/gbnf").glob("*.gbnf"))

try:
    import llama_cpp as L
except ImportError as e:  # the oracle is optional; afm's own tests do not need it
    print(f"SKIP: llama_cpp not importable ({e})")
    sys.exit(0)

# (grammar, afm compiles, llama.cpp parses)
PARSE_CASES = [
    ('root ::= "a" | "b"', True, True),
    ('root ::= [a-z]+ ("," [a-z]+)*', True, True),
    ('root ::= [^\\n]{1,5} "\\n"', True, True),
    ('root ::= "x"{2} "y"{1,} "z"{0,3}', True, True),
    ('root ::= item\nitem ::= "(" item? ")"', True, True),
    ('# comment\nroot ::= ( "a" |\n  "b" )   # trailing\n', True, True),
    ('root ::= "a" |\n "b"', True, True),
    ('root ::= "\\x41\\u00e9\\U0001F600\\t\\"\\\\"', True, True),
    ('root ::= [\\[\\]\\-]', True, True),
    ('root ::= "é" [ぁ-ゟ]*', True, True),
    ('root ::= .', True, True),
    ('root ::= ', True, True),
    ('root ::= x-y\nx-y ::= "1"', True, True),
    ('root ::= undefined', False, False),
    ('root ::= "unterminated', False, False),
    ('root ::= [abc', False, False),
    ('root ::= ("a"', False, False),
    ('root ::= "a")', False, False),
    ('root = "a"', False, False),
    ('root ::= "\\q"', False, False),
    ('other ::= "a"', False, False),
    ('root ::= "a"{,3}', False, False),
    # Documented differences.
    ('root ::= root "a" | "a"', True, False),  # left recursion: fine for an Earley matcher
    ('root ::= "a"\nroot ::= "b"', False, True),  # llama.cpp keeps the last definition
    ('root ::= "x" root', False, True),  # never finishes: llama.cpp accepts an empty language
    ('root ::= "a"\n  | "b"', True, False),  # a line starting with '|' continues the rule
]


class Llama:
    def __init__(self, gguf):
        L.llama_backend_init()
        params = L.llama_model_default_params()
        params.vocab_only = True
        self.model = L.llama_model_load_from_file(str(gguf).encode(), params)
        assert self.model, f"llama.cpp could not load {gguf}"
        self.vocab = L.llama_model_get_vocab(self.model)
        self.eos = L.llama_vocab_eos(self.vocab)

    def sampler(self, grammar, root="root"):
        return L.llama_sampler_init_grammar(self.vocab, grammar.encode(), root.encode())

    def parses(self, grammar):
        s = self.sampler(grammar)
        if not s:
            return False
        L.llama_sampler_free(s)
        return True

    def tokens(self, data):
        buf = (L.llama_token * (len(data) + 8))()
        n = L.llama_tokenize(self.vocab, data, len(data), buf, len(buf), False, False)
        assert n >= 0, "tokenize failed"
        return list(buf[:n])

    def allows(self, sampler, token):
        arr_data = (L.llama_token_data * 1)(L.llama_token_data(token, 0.0, 0.0))
        arr = L.llama_token_data_array(arr_data, 1, -1, False)
        L.llama_sampler_apply(sampler, ctypes.byref(arr))
        return arr_data[0].logit != float("-inf")

    def accepts(self, grammar, text):
        """Whether llama.cpp's grammar accepts the whole text and then allows EOS."""
        s = self.sampler(grammar)
        assert s, "grammar did not parse"
        try:
            for t in self.tokens(text):
                if not self.allows(s, t):
                    return False
                L.llama_sampler_accept(s, t)
            return self.eos < 0 or self.allows(s, self.eos)
        finally:
            L.llama_sampler_free(s)


def afm(*args):  # bytes out: samples may hold any code point, NUL and CR included
    return subprocess.run([AFM, "schema", *args], capture_output=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        gguf = Path(tmp) / "qwen2.gguf"
        subprocess.run([AFM, "convert", str(HF_MODEL), str(gguf)], check=True,
                       capture_output=True)
        return run(Llama(gguf), tmp)


def run(llama, tmp):
    failures = 0
    # The matcher oracle itself must tell strings apart.
    json_grammar = (ROOT / "tests/data/gbnf/json.gbnf").read_text()
    for text, want in [('{"a": [1, -2.5e3, "\u00e9"]}', True), ("[1,]", False), ("01", False),
                       ('"\u00e9 é"', True), ("{", False)]:
        if llama.accepts(json_grammar, text.encode()) != want:
            print(f"FAIL oracle self-check: llama.cpp on {text!r} should be {want}")
            failures += 1
    for i, (grammar, want_afm, want_llama) in enumerate(PARSE_CASES):
        path = Path(tmp) / f"g{i}.gbnf"
        path.write_text(grammar)
        got_afm = afm("compile", "--grammar", str(path)).returncode == 0
        got_llama = llama.parses(grammar)
        if (got_afm, got_llama) != (want_afm, want_llama):
            print(f"FAIL parse {grammar!r}: afm {got_afm} (want {want_afm}), "
                  f"llama.cpp {got_llama} (want {want_llama})")
            failures += 1
    checked = 0
    for path in GRAMMARS:
        grammar = path.read_text()
        if not llama.parses(grammar):
            print(f"FAIL {path.name}: llama.cpp does not parse it")
            failures += 1
            continue
        # One walk per call: samples may contain line breaks. A walk that reaches the token
        # limit is reported (exit 1, nothing printed) and skipped.
        samples = []
        for seed in range(20):
            r = afm("sample", "--grammar", str(path), "--seed", str(seed), "--max-tokens", "400")
            if r.returncode == 0:
                samples.append(r.stdout[:-1])  # the line break the command adds
            elif b"max-tokens" not in r.stderr:
                print(f"FAIL {path.name}: afm sample: {r.stderr.decode().strip()}")
                failures += 1
        for text in samples:
            if b"\x00" in text:  # llama.cpp's matcher cannot match U+0000 (docs/guided.md)
                continue
            checked += 1
            if not llama.accepts(grammar, text):
                print(f"FAIL {path.name}: llama.cpp rejects afm's sample {text!r}")
                failures += 1
    print(f"{len(PARSE_CASES)} parse cases, {len(GRAMMARS)} grammars, {checked} samples checked, "
          f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

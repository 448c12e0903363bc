"""`afm-train expand` end to end on the shipped model (train/block_expansion.h): the grown file
has twice the layers and Block 1 grown to match, the runtime loads it, and its perplexity and
greedy text are the base's (the new layers add zero); bad layer lists are refused by name."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qat_cli_test import AFM, BASE, TRAIN, run  # noqa: E402  (the trainer CLI tests' helpers)

TEXT = "/usr/share/common-licenses/GPL-3"


def perplexity(model):
    out = run([AFM, "perplexity", "-m", model, "-f", TEXT, "--chunk", "256", "--chunks", "4",
               "-t", "2", "--json"]).stdout
    return json.loads(out)["perplexity"]


def greedy(model):
    out = run([AFM, "generate", "-m", model, "-p", "Alice paid Bob 42 euros on", "-n", "16",
               "--temp", "0", "-t", "1", "--json"]).stdout
    return json.loads(out)["tokens"]


def test_grown_model_is_the_base(tmp):
    grown = os.path.join(tmp, "grown.gguf")
    out = run([TRAIN, "expand", "--base", BASE, "--out", grown, "--name", "grown"]).stdout
    assert "24 layers (12 new" in out and "Block 1 = 16 layers" in out, out
    describe = json.loads(run([AFM, "info", grown, "--json"]).stdout)["engine"]["describe"]
    assert "24 layers" in describe and "block 1 = layers 0-15" in describe, describe
    # f32 copies of a q8_0 base: the same function up to the base's own quantization of
    # activations, so perplexity within 0.5% and the same greedy tokens.
    base_ppl, grown_ppl = perplexity(BASE), perplexity(grown)
    assert abs(grown_ppl / base_ppl - 1) < 0.005, (base_ppl, grown_ppl)
    assert greedy(grown) == greedy(BASE)


def test_bad_layer_lists_are_refused(tmp):
    out = os.path.join(tmp, "x.gguf")
    for layers, words in (("3,3", "listed twice"), ("12", "is not in 0 .. 11"), ("2,x", "not a layer number")):
        p = run([TRAIN, "expand", "--base", BASE, "--out", out, "--layers", layers], ok=False)
        assert p.returncode != 0 and words in p.stderr, (layers, p.returncode, p.stderr)
        assert not os.path.exists(out)
    every = run([TRAIN, "expand", "--base", BASE, "--out", out, "--every", "4"]).stdout
    assert "15 layers (3 new" in every and "Block 1 = 10 layers" in every, every


def main():
    for test in (test_grown_model_is_the_base, test_bad_layer_lists_are_refused):
        with tempfile.TemporaryDirectory() as tmp:
            test(tmp)
        print(f"ok {test.__name__}")
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

"""lm-eval (PyPI lm_eval) against `afm serve` with the repository's task (eval/lm_eval/): every
choice's log-likelihood that lm-eval computed through the server's /tokenize and
/v1/completions (echo + logprobs) equals, within 2e-3 a token, the one computed from
`afm logits --logits` on the same token ids (the C++ engine directly, no server), and lm-eval's accuracy equals the accuracy of
those log-likelihoods. The token ids are split as lm-eval splits them: the whole text tokenized
once, the context's own token count marking where the continuation starts (trailing
whitespace of the context moves to the continuation). AFM_BIN is set by CTest.
"""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import lm_eval_suite  # noqa: E402

AFM = os.environ.get("AFM_BIN", "build/afm")
MODEL = "models/afm-device-21m.gguf"
LIMIT = 12


def afm_json(*args):
    return json.loads(subprocess.run([AFM, *args, "--json"], check=True, capture_output=True,
                                     text=True).stdout)


def tokenize(text):
    return afm_json("tokenize", "-m", MODEL, "-p", text)["tokens"]


def loglikelihood(context, continuation):
    """(sum of log p(continuation tokens), greedy, tokens) from afm logits' output."""
    spaces = len(context) - len(context.rstrip())
    if spaces:
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    whole = tokenize(context + continuation)
    start = len(tokenize(context))
    out = afm_json("logits", "-m", MODEL, "--tokens", ",".join(map(str, whole)), "--logits", "-t", "2")
    logits = np.array(out["logits"], dtype=np.float64)
    total, greedy = 0.0, True
    for p in range(start, len(whole)):
        row = logits[p - 1]
        norm = row.max() + np.log(np.exp(row - row.max()).sum())
        total += row[whole[p]] - norm
        greedy &= int(row.argmax()) == whole[p]
    return total, greedy, len(whole) - start


def main():
    results = lm_eval_suite.run(MODEL, ["afm_arithmetic"], LIMIT, AFM, threads=2)
    samples = results["samples"]["afm_arithmetic"]
    assert len(samples) == LIMIT, len(samples)
    correct = 0
    for s in samples:
        ours = []
        for (context, continuation), resp in zip(s["arguments"], s["resps"]):
            theirs, their_greedy = resp[0]
            mine, my_greedy, n = loglikelihood(context, continuation)
            # The server scores each position as a decode step computes it, `afm logits` in one
            # batched pass: with 8-bit activations the two round apart by up to ~1e-3 a token.
            assert abs(theirs - mine) < 2e-3 * n, (s["doc_id"], continuation, theirs, mine)
            assert bool(their_greedy) == my_greedy, (s["doc_id"], continuation)
            ours.append(mine)
        correct += int(np.argmax(ours) == s["target"])
    acc = results["results"]["afm_arithmetic"]["acc,none"]
    assert abs(acc - correct / LIMIT) < 1e-9, (acc, correct)
    print(f"afm_arithmetic acc {acc:.3f} on {LIMIT} documents; log-likelihoods agree")


if __name__ == "__main__":
    main()

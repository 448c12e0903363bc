"""`afm train adapter` end to end on the shipped model: LoRA branches are trained on a task the
base has never seen (a fixed code word per color, sft_cli_test.py's task) with the base frozen.
Checks: the held-out loss on the answers falls well below the base's (step 0 is the base: B
starts at zero); the adapter file passes the runtime's checks against the base (hash, names,
shapes); with it, greedy answers to held-out phrasings are the code words, which the base alone
does not give; the merged model (--merged) gives the same answers; a stopped run resumes; bad
LoRA flags are errors. CPU, one thread."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sft_cli_test import AFM, BASE, CODES, records, run, write_codes  # noqa: E402


def adapter(data, out, steps, *extra):
    return [AFM, "train", "adapter", "--base", BASE, "--data", data, "--out", out,
            "--steps", str(steps), "--seq-len", "256", "--batch-size", "4", "--lr", "2e-3",
            "--warmup", "2", "--rank", "8", "--alpha", "16", "--eval-every", "10",
            "--eval-batches", "4", "--log-every", "1", "--checkpoint-every", "10",
            "--val-fraction", "0.05", "-t", "1", "--cpu-bf16", "off", *extra]


def answer(model, color, *extra):
    """The model's greedy reply to a phrasing the training data does not use."""
    p = run([AFM, "respond", "-m", model, "-t", "1", "--temp", "0", "-n", "6",
             "--system", "Answer with the code word only.",
             "-p", f"The code word that belongs to {color} is what?", *extra])
    return p.stdout.strip()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "codes.jsonl")
        write_codes(data, 400)
        out = os.path.join(tmp, "run")
        run(adapter(data, out, 30, "--stop-after", "10"))
        run(adapter(data, out, 30, "--merged"))
        log = records(out)
        steps = [r["step"] for r in log if "loss" in r]
        assert steps == list(range(1, 31)), steps  # resumed at 11, no step twice
        start = next(r for r in log if r.get("event") == "start")
        assert 0 < start["trainable_parameters"] < start["parameters"] // 10, start
        val = [r["val_loss"] for r in log if "val_loss" in r]
        assert log[1].get("step") == 0 and len(val) >= 4, log[:3]
        # The base (step 0) against the trained adapter on held-out conversations.
        assert val[-1] < 0.5 * val[0], val

        path = os.path.join(out, "adapter.gguf")
        info = json.loads(run([AFM, "adapter", "info", path, "--base", BASE, "--json"]).stdout)
        # q k v o gate up down x 8 Block-1 layers + q o gate up down x 4 Block-2 layers
        assert info["base_checked"] and len(info["tensors"]) == 76, info

        right = {"base": 0, "adapter": 0, "merged": 0}
        for color, code in sorted(CODES.items()):
            right["base"] += code in answer(BASE, color)
            right["adapter"] += code in answer(BASE, color, "--adapter", path)
            right["merged"] += code in answer(os.path.join(out, "model.gguf"), color)
        assert right["adapter"] >= 6 and right["merged"] >= 6 and right["base"] <= 1, right

        p = run(adapter(data, os.path.join(tmp, "bad"), 2, "--targets", "attn_q,attn_kv"),
                ok=False)
        assert p.returncode != 0 and "LoRA target attn_kv" in p.stderr, p.stderr
    print("adapter cli: ok", right, f"val {val[0]:.3f} -> {val[-1]:.3f}")
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

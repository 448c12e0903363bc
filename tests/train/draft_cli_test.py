"""`afm train draft` end to end on the shipped model: conversations from `afm data synth` are
rendered with the base's template and a one-layer draft is distilled from the frozen base for
a few steps; the held-out KL falls and the greedy agreement with the base rises, a stopped run
resumes where it stopped, the exported draft loads in the runtime with exactly the base's
tokenizer, and shapes or sequence lengths the base cannot take are errors naming the option.
CPU, one thread."""
import json
import os
import subprocess
import tempfile

BUILD = os.environ.get("AFM_BUILD_DIR", "build")
AFM = os.path.join(BUILD, "afm")
BASE = "models/afm-device-21m.gguf"


def run(args, ok=True):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if ok and p.returncode != 0:
        raise AssertionError(f"{args} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def records(run_dir):
    with open(os.path.join(run_dir, "log.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def draft(data, out, *extra, seq=192):
    return [AFM, "train", "draft", "--base", BASE, "--data", data, "--out", out,
            "--layers", "1", "--steps", "24", "--batch", "4", "--seq", str(seq), "--lr", "2e-3",
            "--warmup", "2", "--eval-every", "12", "--eval-batches", "3", "--log-every", "1",
            "--checkpoint-every", "12", "--val-fraction", "0.1", "-t", "1", "--cpu-bf16", "off",
            *extra]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "conv.jsonl")
        run([AFM, "data", "synth", "--seed", "77", "--n", "240", "--format", "jsonl", "--out",
             data])
        out = os.path.join(tmp, "run")
        # Stop after 12 of 24 steps, then resume to the end.
        stopped = run(draft(data, out, "--stop-after", "12"))
        assert "stopped at step 12" in stopped.stdout, stopped.stdout
        assert not os.path.exists(os.path.join(out, "model.gguf"))
        done = run(draft(data, out))
        assert "greedy agreement" in done.stdout, done.stdout
        log = records(out)
        start = next(r for r in log if r.get("event") == "start")
        assert start["base"] == BASE and start["train_conversations"] > 140, start
        steps = [r["step"] for r in log if "loss" in r]
        assert steps == list(range(1, 25)), steps  # resumed at 13, no step twice
        assert all("kl" in r and "agreement" in r for r in log if "loss" in r)
        evals = [r for r in log if "val_kl" in r]
        assert [e["step"] for e in evals] == [0, 12, 24], evals
        first, last = evals[0], evals[-1]
        # The one-layer draft starts from the base's embedding and first layer; measured: KL
        # 5.08 -> 1.50, greedy agreement 0.18 -> 0.60.
        assert last["val_kl"] < 0.5 * first["val_kl"], (first, last)
        assert last["val_agreement"] > first["val_agreement"] + 0.2, (first, last)
        assert last["val_ce"] >= last["val_base_ce"], last
        assert 0 < last["val_target_agreement"] < 1 and last["val_targets"] > 0, last

        model = os.path.join(out, "model.gguf")
        info = json.loads(run([AFM, "info", model, "--json"]).stdout)
        base_info = json.loads(run([AFM, "info", BASE, "--json"]).stdout)
        assert info["architecture"] == "afm-device", info["architecture"]
        assert info["tokenizer"] == base_info["tokenizer"], (info["tokenizer"], base_info["tokenizer"])
        assert info["chat_template"] == base_info["chat_template"]
        text = "<turn_start> user\nWhat is 17 + 25?<turn_end>\n<turn_start> assistant\n"
        ids = [json.loads(run([AFM, "tokenize", "-m", m, "-p", text, "--json"]).stdout)["tokens"]
               for m in (model, BASE)]
        assert ids[0] == ids[1], ids
        ev = json.loads(run([AFM, "logits", "-m", model, "-p", text, "--json"]).stdout)
        assert len(ev["argmax"]) == len(ids[0])

        # Options the base cannot take: typed errors naming them, no output file.
        bad = run(draft(data, os.path.join(tmp, "bad"), "--heads", "5"), ok=False)
        assert bad.returncode != 0 and "--heads 5" in bad.stderr, bad.stderr
        bad = run(draft(data, os.path.join(tmp, "bad2"), seq=2000), ok=False)
        assert bad.returncode != 0 and "context" in bad.stderr, bad.stderr
        assert not os.path.exists(os.path.join(tmp, "bad", "model.gguf"))
        helped = run([AFM, "train", "draft", "--help"])
        assert "--ce-weight" in helped.stdout and "--temperature" in helped.stdout
    print("ok")


if __name__ == "__main__":
    main()

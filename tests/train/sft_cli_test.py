"""`afm train sft` end to end on the shipped model: a JSONL of conversations is rendered and
fine-tuned on for a few steps; the held-out loss on assistant tokens falls, the
exported model runs in the runtime, a stopped run resumes where it stopped, and a malformed
line is an error naming it. CPU, one thread."""
import json
import os
import subprocess
import sys
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


def sft(data, out, steps, *extra):
    return [AFM, "train", "sft", "--base", BASE, "--data", data, "--out", out,
            "--steps", str(steps), "--seq-len", "256", "--batch-size", "4", "--lr", "3e-4",
            "--warmup", "2", "--eval-every", "6", "--eval-batches", "4", "--log-every", "1",
            "--checkpoint-every", "6", "--val-fraction", "0.05", "-t", "1", "--cpu-bf16", "off",
            *extra]


# A task the base model has never seen: a fixed code word per color. The base already fits the
# synthetic tasks it was pretrained on (held-out loss ~0.1 nats/token), so they would not show
# whether fine-tuning learns.
CODES = {"red": "Falcon", "green": "Harbor", "blue": "Lantern", "yellow": "Meadow",
         "purple": "Quarry", "orange": "Saddle", "white": "Timber", "black": "Willow"}
ASKS = ["What is the code word for {}?", "Code word for {}, please.", "Tell me the {} code word.",
        "Which code word goes with {}?"]


def write_codes(path, n):
    colors = sorted(CODES)
    with open(path, "w") as f:
        for i in range(n):
            color = colors[i % len(colors)]
            ask = ASKS[(i // len(colors)) % len(ASKS)].format(color)
            f.write(json.dumps({"messages": [
                {"role": "system", "content": "Answer with the code word only."},
                {"role": "user", "content": ask},
                {"role": "assistant", "content": f"{CODES[color]}."}]}) + "\n")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "sft.jsonl")
        write_codes(data, 400)
        out = os.path.join(tmp, "run")
        # Stop after 6 of 12 steps, then resume to the end.
        run(sft(data, out, 12, "--stop-after", "6"))
        first = records(out)
        assert any(r.get("event") == "start" for r in first), first[:1]
        start = next(r for r in first if r.get("event") == "start")
        assert start["train_conversations"] > 340 and start["val_conversations"] > 5, start
        run(sft(data, out, 12))
        log = records(out)
        steps = [r["step"] for r in log if "loss" in r]
        assert steps == list(range(1, 13)), steps  # resumed at 7, no step twice
        val = [r["val_loss"] for r in log if "val_loss" in r]
        assert len(val) >= 3 and log[1].get("step") == 0, log[:3]
        # Held-out loss on the assistant's tokens before training (step 0) and at the end
        # (step 12): the synthetic answers are formulaic, so a few steps must lower it.
        assert val[-1] < val[0], val
        model = os.path.join(out, "model.gguf")
        gen = run([AFM, "generate", "-m", model, "-p", "Hello", "-n", "4", "-t", "1"])
        assert gen.stdout.strip() or gen.stderr, gen

        bad = os.path.join(tmp, "bad.jsonl")
        with open(data) as f, open(bad, "w") as g:
            g.write(f.readline())  # a good line first: the error must name line 2
            g.write('{"messages": [{"role": "user", "content": "no answer"}]}\n')
        p = run(sft(bad, os.path.join(tmp, "bad_run"), 2), ok=False)
        assert p.returncode != 0 and f"{bad}:2: " in p.stderr and "no assistant turn" in p.stderr, \
            p.stderr
        args = [a if a != "256" else "ten" for a in sft(data, os.path.join(tmp, "bad2"), 2)]
        p = run(args, ok=False)
        assert p.returncode != 0 and "--seq-len must be a number, got 'ten'" in p.stderr, p.stderr
    print("sft cli: ok")
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

"""`afm train rloo` end to end on the shipped model (synchronous RLOO, a LoRA policy):
prompts of the three rule-rewarded tasks from `afm data synth --format jsonl`; the first
update's KL to the base is exactly 0 (the policy starts as the base) and, once an update had
samples better or worse than their group, later ones are not;
every step logs the reward per task; a stopped run resumes at the next step; the same seed
samples the same first-step rewards; the adapter passes the runtime's checks against the base
and the merged model runs; a conversation no rule reward checks is an error naming its line.
CPU, one thread."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sft_cli_test import AFM, BASE, records, run  # noqa: E402


def rloo(prompts, out, steps, *extra):
    return [AFM, "train", "rloo", "--base", BASE, "--prompts", prompts, "--out", out,
            "--steps", str(steps), "--prompts-per-step", "3", "-k", "4", "--max-new-tokens", "48",
            "--temperature", "1.5",
            "--checkpoint-every", "2", "--lr", "1e-3", "-t", "1", "--cpu-bf16", "off", *extra]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        prompts = os.path.join(tmp, "prompts.jsonl")
        run([AFM, "data", "synth", "--seed", "41", "--n", "60", "--tasks",
             "arithmetic,extraction,tools", "--bare-arithmetic", "50", "--format", "jsonl",
             "--out", prompts])
        out = os.path.join(tmp, "run")
        run(rloo(prompts, out, 4, "--stop-after", "2"))
        run(rloo(prompts, out, 4, "--merged"))
        log = records(out)
        start = next(r for r in log if r.get("event") == "start")
        assert start["tasks"] == 60 and start["trainable_parameters"] > 0, start
        steps = [r for r in log if "step" in r]
        assert [r["step"] for r in steps] == [1, 2, 3, 4], steps  # resumed at 3
        assert steps[0]["kl"] == 0.0, steps[0]
        # The first update with a nonzero advantage moves the policy off the base: the KL of
        # every later step is nonzero.
        moved = next(i for i, r in enumerate(steps) if r["advantage_abs_mean"] > 0)
        assert moved < 3, steps
        assert all(abs(r["kl"]) > 0 for r in steps[moved + 1:]), steps
        for r in steps:
            assert 0.0 <= r["reward"] <= 1.0 and r["completion_tokens"] > 0, r
            assert set(r["reward_by_task"]) <= {"arithmetic", "extraction", "tools"}, r

        again = os.path.join(tmp, "again")
        run(rloo(prompts, again, 1))
        first = next(r for r in records(again) if r.get("step") == 1)
        assert first["reward"] == steps[0]["reward"], (first, steps[0])
        assert first["reward_by_task"] == steps[0]["reward_by_task"], (first, steps[0])

        adapter = os.path.join(out, "adapter.gguf")
        info = json.loads(run([AFM, "adapter", "info", adapter, "--base", BASE, "--json"]).stdout)
        assert info["base_checked"] and len(info["tensors"]) == 76, info
        gen = run([AFM, "generate", "-m", os.path.join(out, "model.gguf"), "-p", "Hi", "-n", "4",
                   "-t", "1"])
        assert gen.returncode == 0

        chat = os.path.join(tmp, "chat.jsonl")
        with open(prompts) as f, open(chat, "w") as g:
            g.write(f.readline())
            g.write(json.dumps({"messages": [{"role": "user", "content": "Hi"},
                                             {"role": "assistant", "content": "Hello!"}]}) + "\n")
        p = run(rloo(chat, os.path.join(tmp, "bad"), 1), ok=False)
        assert p.returncode != 0 and f"{chat}:2: " in p.stderr and "no rule reward" in p.stderr, \
            p.stderr
    print("rloo cli: ok", [round(r["reward"], 3) for r in steps])
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

"""The reward model end to end on the shipped model (docs/rl.md "Reward model"):
`afm data preferences` turns synthetic conversations into pairs (chosen = the reference, rejected
= one task mistake graded by the rule reward, or another conversation's reply for small talk);
`afm train reward` raises the held-out pairwise accuracy well above where the base starts;
`afm train rloo --reward-model` scores free-answer prompts with it; without one, such prompts
are an error that says what is missing; a malformed pair names its line. CPU, one thread."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sft_cli_test import AFM, BASE, records, run  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as tmp:
        conv = os.path.join(tmp, "conv.jsonl")
        # Short conversations (a wrong stated sum, another conversation's small talk) keep the
        # training fast; tests/rl covers the mistakes of extraction and tool calls.
        run([AFM, "data", "synth", "--seed", "71", "--n", "240", "--tasks", "arithmetic,chat",
             "--bare-arithmetic", "50", "--format", "jsonl", "--out", conv])
        pairs = os.path.join(tmp, "pairs.jsonl")
        summary = json.loads(run([AFM, "data", "preferences", "--input", conv, "--out", pairs,
                                  "--seed", "3", "--json"]).stdout)
        assert summary["pairs"] == 240, summary
        with open(pairs) as f:
            lines = [json.loads(line) for line in f]
        for p in lines:
            assert p["chosen"] != p["rejected"] and p["chosen_grade"] == 1.0, p
            assert 0.0 <= p["rejected_grade"] < 1.0, p

        out = os.path.join(tmp, "rm")
        run([AFM, "train", "reward", "--base", BASE, "--data", pairs, "--out", out,
             "--steps", "20", "--batch-size", "8", "--lr", "1e-4", "--val-fraction", "0.2",
             "--eval-every", "20", "--max-tokens", "512", "-t", "1", "--cpu-bf16", "off"])
        evals = [r for r in records(out) if "val_accuracy" in r]
        first, last = evals[0], evals[-1]
        assert first["step"] == 0 and last["step"] == 20, evals
        assert last["val_accuracy"] >= 0.65 and last["val_accuracy"] >= first["val_accuracy"] + 0.15, evals
        model = os.path.join(out, "model.gguf")
        import gguf  # noqa: E402 (the project's .venv has it)
        fields = gguf.GGUFReader(model).fields
        assert "afm.reward.score_token" in fields and "tokenizer.chat_template" in fields

        chat = os.path.join(tmp, "chat.jsonl")
        run([AFM, "data", "synth", "--seed", "72", "--n", "20", "--tasks", "chat", "--format",
             "jsonl", "--out", chat])
        rl = os.path.join(tmp, "rl")
        run([AFM, "train", "rloo", "--base", BASE, "--prompts", chat, "--out", rl, "--steps", "1",
             "--prompts-per-step", "2", "-k", "2", "--max-new-tokens", "16", "-t", "1",
             "--cpu-bf16", "off", "--reward-model", model])
        step = next(r for r in records(rl) if r.get("step") == 1)
        assert set(step["reward_by_task"]) == {"chat"} and 0 < step["reward"] < 1, step
        p = run([AFM, "train", "rloo", "--base", BASE, "--prompts", chat, "--out",
                 os.path.join(tmp, "no_rm"), "--steps", "1", "-t", "1"], ok=False)
        assert p.returncode != 0 and "--reward-model" in p.stderr, p.stderr

        bad = os.path.join(tmp, "bad.jsonl")
        with open(bad, "w") as f:
            f.write(json.dumps(lines[0]) + "\n")
            f.write(json.dumps({"messages": [{"role": "user", "content": "x"}], "chosen": "a"}) + "\n")
        p = run([AFM, "train", "reward", "--base", BASE, "--data", bad, "--out",
                 os.path.join(tmp, "bad"), "--steps", "1"], ok=False)
        assert p.returncode != 0 and f"{bad}:2: " in p.stderr and "rejected" in p.stderr, p.stderr
    print("reward cli: ok", [(r["step"], round(r["val_accuracy"], 3)) for r in evals])
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

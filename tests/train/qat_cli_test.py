"""Quantization-aware training end to end on the shipped model (docs/compression.md):
`afm train sft --qat` stopped and resumed, its export holds q2_b matrices and a q4_0 embedding
and runs, `afm-train export` of the run's checkpoint writes the same file byte for byte, and
`afm-train pretrain --init-from MODEL --qat` trains the same model on token shards and exports
it the same way. CPU, one thread, a few steps each."""
import json
import os
import struct
import subprocess
import sys
import tempfile

BUILD = os.environ.get("AFM_BUILD_DIR", "build")
AFM = os.path.join(BUILD, "afm")
TRAIN = os.path.join(BUILD, "afm-train")
BASE = "models/afm-device-21m.gguf"


def run(args, ok=True):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if ok and p.returncode != 0:
        raise AssertionError(f"{args} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def tensor_types(path):
    info = json.loads(run([AFM, "info", path, "--json"]).stdout)
    return {name: t["count"] for name, t in info["tensor_types"].items()}


def write_conversations(path, n):
    with open(path, "w") as f:
        for i in range(n):
            a, b = 10 + i % 50, 20 + (i * 7) % 60
            f.write(json.dumps({"messages": [
                {"role": "user", "content": f"What is {a} plus {b}?"},
                {"role": "assistant", "content": f"{a} + {b} = {a + b}."}]}) + "\n")


def write_shards(folder, tokens, vocab=8192):
    """Token shards in the documented format (docs/data.md), ids spread over the vocabulary."""
    os.makedirs(folder)
    split = {}
    for name, count in (("train", tokens), ("val", tokens // 8)):
        ids = [1 + (i * 7919) % (vocab - 1) for i in range(count)]
        with open(os.path.join(folder, f"{name}-00000.bin"), "wb") as f:
            f.write(b"AFMTOK01" + struct.pack("<IIQII", 1, 2, count, vocab, 0))
            f.write(struct.pack(f"<{count}H", *ids))
        split[name] = {"shards": [f"{name}-00000.bin"], "tokens": count, "documents": 1}
    meta = {"format": "afm-shards", "version": 1, "tokenizer_sha256": "0" * 64,
            "vocab_size": vocab, "eos_id": 0, "token_bytes": 2, "seed": 0, "val_fraction": 0.1,
            **split, "inputs": []}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)


def check_qat_model(path):
    types = tensor_types(path)
    assert set(types) == {"f32", "q2_b", "q4_0"} and types["q4_0"] == 1, types
    gen = run([AFM, "generate", "-m", path, "-p", "What is 12 plus 30?", "-n", "4", "-t", "1"])
    assert gen.returncode == 0, gen


def test_sft(tmp):
    data = os.path.join(tmp, "sft.jsonl")
    write_conversations(data, 200)
    out = os.path.join(tmp, "run")
    args = [AFM, "train", "sft", "--base", BASE, "--data", data, "--out", out, "--steps", "4",
            "--seq-len", "128", "--batch-size", "2", "--warmup", "1", "--eval-every", "2",
            "--eval-batches", "2", "--checkpoint-every", "2", "--log-every", "1",
            "--val-fraction", "0.05", "-t", "1",
            "--cpu-bf16", "off", "--qat"]
    run(args + ["--stop-after", "2"])  # a checkpoint with the factors and the EMA, then resume
    run(args)
    with open(os.path.join(out, "log.jsonl")) as f:
        steps = [r["step"] for r in map(json.loads, f) if "loss" in r]
    assert steps == [1, 2, 3, 4], steps
    model = os.path.join(out, "model.gguf")
    check_qat_model(model)
    again = os.path.join(tmp, "again.gguf")
    run([TRAIN, "export", "--run", out, "--out", again, "--tokenizer-gguf", BASE,
         "--name", "afm-qat"])
    with open(model, "rb") as a, open(again, "rb") as b:
        assert a.read() == b.read(), "afm-train export of the QAT checkpoint differs from the run's"


def test_pretrain(tmp):
    shards = os.path.join(tmp, "shards")
    write_shards(shards, 20000)
    config = os.path.join(tmp, "config.json")
    out = os.path.join(tmp, "pre")
    with open("models/afm-device-21m.train.json") as f:
        c = json.load(f)
    c["model"]["block_count"] = 2  # --init-from replaces the model with the GGUF's shape
    c.update({"data": {"shards": shards, "seq_len": 64},
              "eval": {"every": 3, "batches": 1}, "log": {"every": 1},
              "checkpoint": {"dir": out, "every": 3}})
    c["optim"].update({"lr": 1e-4, "min_lr": 1e-5, "warmup_steps": 1, "steps": 3,
                       "batch_size": 2})
    with open(config, "w") as f:
        json.dump(c, f)
    run([TRAIN, "pretrain", "--config", config, "--init-from", BASE, "--qat", "-t", "1",
         "--cpu-bf16", "off"])
    with open(os.path.join(out, "checkpoint.json")) as f:
        assert json.load(f)["config"]["model"]["block_count"] == 12  # the GGUF's shape
    exported = os.path.join(tmp, "pre.gguf")
    run([TRAIN, "export", "--run", out, "--out", exported, "--tokenizer-gguf", BASE])
    check_qat_model(exported)


def main():
    for test in (test_sft, test_pretrain):
        with tempfile.TemporaryDirectory() as tmp:
            test(tmp)
        print(f"ok {test.__name__}")
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

"""A training run killed with SIGKILL resumes from its last checkpoint and produces exactly the
losses of a run that was never interrupted (same batches, same optimiser state, same step).

Runs `afm-train pretrain` on a tiny afm-device model over tiny random shards, on the CPU with
one thread (bit-reproducible). Needs numpy."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

TRAINER = os.path.join(os.environ.get("AFM_BUILD_DIR", "build"), "afm-train")


def write_shards(folder, vocab=64):
    os.makedirs(folder)
    rng = np.random.default_rng(0)
    sizes = {"train": 20000, "val": 2000}
    for split, n in sizes.items():
        header = b"AFMTOK01" + np.array([1, 2], "<u4").tobytes() + np.array([n], "<u8").tobytes() \
            + np.array([vocab, 0], "<u4").tobytes()
        tokens = (np.arange(n) * 7 % (vocab // 2)).astype("<u2")
        noise = rng.random(n) < 0.1
        tokens[noise] = rng.integers(0, vocab, int(noise.sum()))
        with open(os.path.join(folder, f"{split}-00000.bin"), "wb") as f:
            f.write(header + tokens.tobytes())
    meta = {"format": "afm-shards", "version": 1, "tokenizer_sha256": "0" * 64,
            "vocab_size": vocab, "eos_id": 0, "token_bytes": 2, "seed": 0, "val_fraction": 0.1,
            "inputs": []}
    for split, n in sizes.items():
        meta[split] = {"shards": [f"{split}-00000.bin"], "tokens": n, "documents": 1}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)


def write_config(path, shards, steps):
    config = {"model": {"arch": "afm-device", "vocab_size": 64, "context_length": 64,
                        "embedding_length": 32, "block_count": 4, "feed_forward_length": 64,
                        "head_count": 2, "head_count_kv": 1},
              "data": {"shards": shards, "seq_len": 32},
              "optim": {"lr": 5e-3, "min_lr": 5e-4, "warmup_steps": 5, "steps": steps,
                        "batch_size": 8},
              "eval": {"every": 0, "batches": 1}, "log": {"every": 1},
              "checkpoint": {"every": 5}, "seed": 3}
    with open(path, "w") as f:
        json.dump(config, f)


def trainer(config, out, **kw):
    return [TRAINER, "pretrain", "--config", config, "--out", out, "--device", "cpu", "-t", "1"]


def losses(run):
    by_step = {}
    with open(os.path.join(run, "log.jsonl")) as f:
        for line in f:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:  # a line the kill cut short
                continue
            if "loss" in r:
                by_step[r["step"]] = r["loss"]  # a re-run step overwrites the killed run's
    return by_step


def main():
    with tempfile.TemporaryDirectory() as tmp:
        shards, config = os.path.join(tmp, "shards"), os.path.join(tmp, "config.json")
        write_shards(shards)
        write_config(config, shards, steps=300)
        straight, killed = os.path.join(tmp, "straight"), os.path.join(tmp, "killed")
        subprocess.run(trainer(config, straight), check=True, capture_output=True)

        proc = subprocess.Popen(trainer(config, killed), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        meta = os.path.join(killed, "checkpoint.json")
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            if os.path.exists(meta) and json.load(open(meta))["next_step"] >= 40:
                break
            time.sleep(0.02)
        if proc.poll() is not None:
            sys.exit("the run ended before it could be killed: make it longer")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed_at = json.load(open(meta))["next_step"]
        subprocess.run(trainer(config, killed), check=True, capture_output=True)

        a, b = losses(straight), losses(killed)
        assert sorted(a) == sorted(b) == list(range(1, 301)), (len(a), len(b))
        diff = [s for s in a if a[s] != b[s]]
        assert not diff, f"steps whose loss differs after resuming from {killed_at}: {diff[:5]}"
        print(f"killed after the checkpoint at step {killed_at}; all 300 losses identical")


if __name__ == "__main__":
    main()

"""Asynchronous RLOO end to end on the shipped model (docs/rl.md), with the faults the design
promises to survive, on a redis-server this test starts (so it can look inside the broker):

- `afm train rloo --generators 2 --broker ADDR` runs 8 updates; step 1's importance ratio is
  ~1 (the runtime's behaviour log-probabilities agree with the trainer's for the same policy);
- kill -9 of a generator: every group it had published is used by a later update (nothing
  published is lost), the launcher starts it again and the run goes on;
- kill -9 of the updater after an odd step s >= 3 (checkpoints at even steps): the launcher
  starts it again, it resumes from the checkpoint of step s - 1 and recomputes step s from the
  same groups with the same loss;
- generators throttle on groups not yet delivered (--max-backlog 2 is below the 4 groups the
  updater holds unacknowledged between checkpoints; counting those deadlocked the run);
- an unreachable broker is a clear error after the retry window, for the updater's run and for
  a generator alone, not a hang.
CPU, one thread per process."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sft_cli_test import AFM, BASE, records, run  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                          check=True).stdout


def rloo(prompts, out, port, *extra):
    return [AFM, "train", "rloo", "--base", BASE, "--prompts", prompts, "--out", out,
            "--generators", "2", "--broker", f"127.0.0.1:{port}", "--run-name", "run", "--steps", "8",
            "--prompts-per-step", "2", "-k", "3", "--max-new-tokens", "24", "--temperature", "1.5",
            "--checkpoint-every", "2", "--max-staleness", "100", "--max-backlog", "2",
            "--lr", "1e-3", "-t", "1", "--generator-threads", "1", "--cpu-bf16", "off", *extra]


def processes(pattern):
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def wait_for(predicate, what, seconds=300):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def step_records(out):
    if not os.path.exists(os.path.join(out, "log.jsonl")):
        return []
    return [r for r in records(out) if "step" in r and "loss" in r]


def kill_updater_after_odd_step(out):
    """kill -9 of the updater once an odd step (3 or more) is logged: checkpoints are taken at
    even steps before the next step's data are read, so the one before it is on disk and the
    resumed updater must recompute that step. The updater is stopped (SIGSTOP) while the log
    is read, so the step it is at cannot change meanwhile."""
    while True:
        wait_for(lambda: len(step_records(out)) >= 3, "step 3")
        updater = processes(f"rloo-updater .*{out}")
        assert len(updater) == 1, updater
        os.kill(updater[0], signal.SIGSTOP)
        last = step_records(out)[-1]["step"]
        if last % 2 == 1:
            os.kill(updater[0], signal.SIGKILL)
            return last
        os.kill(updater[0], signal.SIGCONT)
        wait_for(lambda: step_records(out)[-1]["step"] > last, "the next step")


def check_faults(tmp, prompts, port):
    out = os.path.join(tmp, "run")
    launcher = subprocess.Popen(rloo(prompts, out, port), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(step_records(out)) >= 1, "step 1")
        # Kill a generator: what it published stays on the broker.
        victim = wait_for(lambda: processes(f"rloo-generator .*{out}/generators"), "a generator")[0]
        published = redis(port, "XRANGE", "afm:rloo:run:trajectories", "-", "+").split("\n")
        os.kill(victim, signal.SIGKILL)
        killed_after = kill_updater_after_odd_step(out)
        stdout, stderr = launcher.communicate(timeout=900)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 0, stderr
    assert "the generator" in stderr and "starting it again" in stderr, stderr
    assert "the updater was killed by signal 9; starting it again" in stderr, stderr

    log = records(out)
    steps = [r for r in log if "loss" in r]
    numbers = [r["step"] for r in steps]
    assert numbers[-1] == 8 and sorted(set(numbers)) == list(range(1, 9)), numbers
    assert any(r.get("event") == "resume" and r["step"] == killed_after - 1 for r in log), log
    repeated = [r for r in steps if r["step"] == killed_after]
    # Killed after an odd step was logged: recomputed from the checkpoint of the step before
    # with the groups the first updater had read, so the same loss.
    assert len(repeated) == 2, repeated
    assert repeated[0]["groups"] == repeated[1]["groups"], repeated
    assert abs(repeated[0]["loss"] - repeated[1]["loss"]) <= 1e-6 * max(1, abs(repeated[0]["loss"])), repeated
    assert 0.8 <= steps[0]["ratio_mean"] <= 1.25, steps[0]
    used = {g for r in steps for g in r["groups"]}
    on_broker = [json.loads(line) for line in published if line.startswith("{")]
    assert on_broker, published
    for group in on_broker:  # every group on the broker when the generator died was used
        assert group["id"] in used, (group["id"], sorted(used))
    for r in steps:
        assert r["samples"] == 6 and r["completion_tokens"] > 0 and r["generator_tokens_per_s"] > 0, r
        assert set(r["staleness_histogram"]) and r["malformed"] == 0, r
    assert os.path.exists(os.path.join(out, "adapter.gguf"))
    assert redis(port, "GET", "afm:rloo:run:done").strip() == "1"
    return steps


def check_unreachable(tmp, prompts):
    dead = f"127.0.0.1:{free_port()}"
    t0 = time.time()
    p = run([AFM, "train", "rloo-generator", "--broker", dead, "--run-name", "x", "--base", BASE,
             "--prompts", prompts, "--broker-timeout", "1", "-t", "1"], ok=False)
    assert p.returncode == 1 and f"cannot reach the broker at {dead}" in p.stderr, p.stderr
    p = run(rloo(prompts, os.path.join(tmp, "dead"), dead.split(":")[1], "--broker-timeout", "1"),
            ok=False)
    assert p.returncode != 0 and f"cannot reach the broker at {dead}" in p.stderr, p.stderr
    assert time.time() - t0 < 120


def main():
    with tempfile.TemporaryDirectory() as tmp:
        prompts = os.path.join(tmp, "prompts.jsonl")
        run([AFM, "data", "synth", "--seed", "43", "--n", "60", "--tasks",
             "arithmetic,extraction,tools", "--bare-arithmetic", "50", "--format", "jsonl",
             "--out", prompts])
        port = free_port()
        server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--dir", tmp],
                                  stdout=subprocess.DEVNULL)
        try:
            wait_for(lambda: subprocess.run(["redis-cli", "-p", str(port), "PING"],
                                            capture_output=True, text=True).stdout.strip() == "PONG",
                     "redis-server", 30)
            steps = check_faults(tmp, prompts, port)
        finally:
            server.terminate()
            server.wait()
        check_unreachable(tmp, prompts)
        p = run([AFM, "train", "rloo", "--base", BASE, "--prompts", prompts, "--out",
                 os.path.join(tmp, "x"), "--sync", "--generators", "1"], ok=False)
        assert p.returncode != 0 and "exclude each other" in p.stderr, p.stderr
    print("rloo async: ok", [(r["step"], round(r["reward"], 3), round(r["ratio_mean"], 3))
                             for r in steps])
    return True


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

"""Soak benchmark: `afm serve` under 10,000 mixed requests at 32 at a time (the mix and the
checks of tests/server/soak_test.py, which this runs with more requests). Prints requests/s,
status-code counts, p50/p99 latency per request kind and the server's RSS at the start, after
the first half (warm) and at the end, as JSON; the checks still apply (a failure exits 1).

    .venv/bin/python bench/soak.py [--requests 10000] [--concurrency 32] [--skip KIND,...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "server"))
import soak_test  # noqa: E402

if __name__ == "__main__":
    soak_test.main(["--requests", "10000", "--report", *sys.argv[1:]])

#!/usr/bin/env python3
"""What `tfdebug top` costs on a big run (docs/performance.md, "tfdebug top"): a run directory of
STEPS steps x MODULES modules in metrics.jsonl's real format (the lines JsonlMetricsSink writes),
with the report.json of tests/export/write_run.cpp's run. Measures the CPU time (user + sys, from
getrusage) and the peak memory of `top --once` (reading every step and drawing once), then one
refresh in process (bench/top_refresh.cpp: RunFollower::poll and top_view, with a new step
appended before each, and idle), which is what the screen does every --interval.

  bench/top_refresh.py build/release/tools/tfdebug/tfdebug build/release/bench/top_refresh \
      build/fixtures/runs/finished/run [STEPS MODULES]
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile


def line(step, modules):
    body = {}
    for m in range(modules):
        body[f"blocks.{m // 4}.{('attn.q', 'attn.k', 'mlp.fc1', 'mlp.fc2')[m % 4]}"] = {
            "grad_norm": 0.01 * (1 + m % 7) / (1 + step / 1000),
            "update_ratio": 0.003 + 1e-6 * step,
            "activations": {"outputs": 2, "values": 32768, "nonfinite": 0, "zero_fraction": 0.0,
                            "abs_max": 2.0 + m / 100, "dead_fraction": None},
        }
    return json.dumps({"step": step, "loss": 3.0 / (1 + step / 500), "modules": body}, separators=(",", ":")) + "\n"


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, r.ru_maxrss


def run(cmd):
    before, _ = child_cpu()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    p.wait()
    after, rss = child_cpu()
    assert p.returncode == 0, (cmd, p.returncode)
    return after - before, rss


def main():
    tfdebug, top_refresh, fixture = sys.argv[1], sys.argv[2], sys.argv[3]
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 10_000
    modules = int(sys.argv[5]) if len(sys.argv) > 5 else 100
    out = tempfile.mkdtemp(prefix="top_bench_")  # the run directory
    try:
        with open(f"{out}/metrics.jsonl", "w") as f:
            for s in range(steps):
                f.write(line(s, modules))
        report = json.load(open(f"{fixture}/report.json"))
        report["complete"] = False  # still running: top keeps refreshing
        json.dump(report, open(f"{out}/report.json", "w"))
        size = os.path.getsize(f"{out}/metrics.jsonl")
        print(f"run: {steps:,} steps x {modules} modules, metrics.jsonl {size / 2**20:.1f} MiB")

        # The least of three: the machine is shared.
        once, rss = min(run([tfdebug, "top", out, "--once"]) for _ in range(3))
        print(f"top --once (read every step, draw once): {once:.2f} s CPU, peak RSS {rss / 1024:.0f} MiB")

        # One refresh, in process: bench/top_refresh.cpp.
        subprocess.run([top_refresh, out, "200"], check=True)
    finally:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()

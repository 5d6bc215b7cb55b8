#!/usr/bin/env bash
# End-to-end tests of `tfdebug regress`: exit codes, and its U, p-values, effect sizes and
# intervals recomputed by an independent Python implementation (standard library only: exact
# p by enumerating every arrangement, the normal approximation with tie correction written from
# the textbook formula).
set -u
tfdebug="$1"
data="$2"
bench="$3"
source "$(dirname "$0")/harness.sh"

"$tfdebug" regress "$data/baseline.json" "$data/current.json" >"$work/ok.txt"
check "no slowdown: exit 0" test $? -eq 0
"$tfdebug" regress "$data/baseline.json" "$data/slower.json" >"$work/slow.txt"
check "a 20% slowdown: exit 1" test $? -eq 1
check "the report names it" grep -q 'tokenize/4096 .*critical  <- slower' "$work/slow.txt"
"$tfdebug" regress "$data/baseline.json" "$data/slower.json" --threshold 25 >/dev/null
check "below --threshold 25: exit 0" test $? -eq 0
"$tfdebug" regress "$data/baseline.json" "$data/slower.json" --json >"$work/slow.json"
check "--json with a slowdown still exits 1" test $? -eq 1

# Ties and unequal sizes take the normal approximation.
$py - "$work" <<'PY'
import json, random, sys
random.seed(3)
def bench(name, xs):
    return [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": len(xs),
             "repetition_index": i, "iterations": 1, "real_time": x, "cpu_time": x, "time_unit": "ns"}
            for i, x in enumerate(xs)]
b = bench("ties", [random.randint(100, 104) for _ in range(25)]) + bench("small", [3.0, 1.0, 2.0])
c = bench("ties", [random.randint(101, 105) for _ in range(30)]) + bench("small", [2.5, 4.0, 6.0, 5.0])
json.dump({"benchmarks": b}, open(sys.argv[1] + "/tb.json", "w"))
json.dump({"benchmarks": c}, open(sys.argv[1] + "/tc.json", "w"))
PY
"$tfdebug" regress "$work/tb.json" "$work/tc.json" --json >"$work/ties.json"
check "ties: ran" test -s "$work/ties.json"

check "U, p, Cliff's delta and the interval agree with an independent implementation" $py - \
  "$data/baseline.json" "$data/slower.json" "$work/slow.json" "$work/tb.json" "$work/tc.json" "$work/ties.json" <<'PY'
import itertools, json, math, sys

def samples(path, metric):
    out = {}
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        out.setdefault(b["run_name"], []).append(b[metric + "_time"] * scale[b.get("time_unit", "ns")])
    return out

def u_stat(x, y):
    return sum((b > a) + 0.5 * (b == a) for a in x for b in y)

def exact_p(x, y):
    m, n = len(x), len(y)
    u = u_stat(x, y)
    dist = {}
    for pos in itertools.combinations(range(m + n), n):  # ranks held by y
        s = set(pos)
        v = sum(1 for r in pos for q in range(m + n) if q not in s and q < r)
        dist[v] = dist.get(v, 0) + 1
    total = math.comb(m + n, n)
    lo = sum(c for v, c in dist.items() if v <= u) / total
    hi = sum(c for v, c in dist.items() if v >= u) / total
    return min(1.0, 2 * min(lo, hi))

def exact_dist(m, n):
    dist = {}
    total = math.comb(m + n, n)
    for pos in itertools.combinations(range(m + n), n):
        s = set(pos)
        v = sum(1 for r in pos for q in range(m + n) if q not in s and q < r)
        dist[v] = dist.get(v, 0) + 1 / total
    return dist

def normal_p(x, y):
    m, n = len(x), len(y)
    u = u_stat(x, y)
    pooled = sorted(x + y)
    counts = {}
    for v in pooled:
        counts[v] = counts.get(v, 0) + 1
    N = m + n
    var = m * n / 12 * ((N + 1) - sum(t ** 3 - t for t in counts.values()) / (N * (N - 1)))
    z = max(0.0, abs(u - m * n / 2) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))

def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else (v[k // 2 - 1] + v[k // 2]) / 2

def check(base, cur, report, exact):
    rep = {r["name"]: r for r in json.load(open(report))["benchmarks"]}
    for metric in ("real", "cpu"):
        b, c = samples(base, metric), samples(cur, metric)
        for name in c:
            x, y = b[name], c[name]
            r = rep[name][metric]
            ties = len(set(x) & set(y)) > 0
            assert r["exact"] == (exact and not ties), (name, r)
            p = exact_p(x, y) if r["exact"] else normal_p(x, y)
            assert abs(r["p_value"] - p) <= 1e-12 * max(1, p), (name, metric, r["p_value"], p)
            u = u_stat(x, y)
            assert r["u"] == u, (name, r["u"], u)
            assert abs(r["effect_cliffs_delta"] - (2 * u / (len(x) * len(y)) - 1)) < 1e-12
            assert abs(r["change"] - (median(y) / median(x) - 1)) < 1e-12
            d = sorted(q - p_ for p_ in x for q in y)
            assert abs(r["shift_ns"] - median(d)) < 1e-9 * max(1, abs(median(d)))
            # The interval is [d_(k), d_(N+1-k)]: k the largest with P(U <= k-1) <= 2.5%.
            m, n = len(x), len(y)
            if r["exact"]:
                dist = exact_dist(m, n)
                k, cdf = 0, 0.0
                while cdf + dist.get(k, 0) <= 0.025:
                    cdf += dist.get(k, 0)
                    k += 1
            else:
                k = math.floor(m * n / 2 - 1.959963984540054 * math.sqrt(m * n * (m + n + 1) / 12))
            k = min(max(k, 1), len(d))
            base_median = median(x)
            assert abs(r["ci_low"] * base_median - d[k - 1]) <= 1e-9 * max(1, abs(d[k - 1])), (name, r, d[k - 1])
            assert abs(r["ci_high"] * base_median - d[len(d) - k]) <= 1e-9 * max(1, abs(d[len(d) - k])), (name, r)
            assert r["ci_low"] <= r["ci_high"]

check(sys.argv[1], sys.argv[2], sys.argv[3], True)
check(sys.argv[4], sys.argv[5], sys.argv[6], True)
rep = {r["name"]: r for r in json.load(open(sys.argv[6]))["benchmarks"]}
assert not rep["ties"]["real"]["exact"]
assert rep["small"]["real"]["exact"] and rep["small"]["n_baseline"] == 3 and rep["small"]["n_current"] == 4
slow = {r["name"]: r for r in json.load(open(sys.argv[3]))["benchmarks"]}
assert slow["tokenize/4096"]["grade"] == "critical" and slow["tokenize/4096"]["fails"]
assert slow["stats/f32/256KiB"]["grade"] == "improved"
assert json.load(open(sys.argv[3]))["failing"] == 1
PY

echo '{"benchmarks": 3}' >"$work/bad.json"
"$tfdebug" regress "$data/baseline.json" "$work/bad.json" 2>/dev/null
check "not Google Benchmark JSON: exit 2" test $? -eq 2
"$tfdebug" regress "$data/baseline.json" "$work/none.json" 2>/dev/null
check "a missing file: exit 2" test $? -eq 2
"$tfdebug" regress "$data/baseline.json" "$data/current.json" --alpha 2 2>/dev/null
check "a bad --alpha: exit 2" test $? -eq 2

# Real Google Benchmark output, repetitions included, parses.
"$bench" --benchmark_filter='rdtsc' --benchmark_repetitions=3 --benchmark_min_time=0.01 \
  --benchmark_format=json >"$work/real1.json" 2>/dev/null
cp "$work/real1.json" "$work/real2.json"
"$tfdebug" regress "$work/real1.json" "$work/real2.json" --json >"$work/real.json"
check "real benchmark JSON: identical runs exit 0, p = 1" $py -c "
import json, sys
r = json.load(open(sys.argv[1]))['benchmarks']
assert [b['name'] for b in r] == ['rdtsc/pair'] and r[0]['n_current'] == 3, r
assert r[0]['real']['p_value'] == 1.0 and r[0]['grade'] == 'unchanged'
" "$work/real.json"

finish "cli regress"

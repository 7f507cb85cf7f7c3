#!/usr/bin/env bash
# Slowdown of kprof builds against uninstrumented builds on the workloads:
# median of 3 interleaved runs each of the plain build, KPROF_MODE=off (the
# paper's "No Prof."), and the sampling agent (g = 10000, R = 100); exact
# mode once at -n 10. A stopgap until the evaluation harness (issue 5).
#
#   bash bench/overhead.sh [workload ...]      (from the repository root)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/kprof" "$root/cmd/kprof"
workloads=${*:-compress db jess jack json bigmath binarytrees mpegaudio javac}
cd "$root/bench/workloads"
for w in $workloads; do
	echo "building $w" >&2
	go build -o "$out/$w.plain" "./$w"
	"$out/kprof" build -o "$out/$w.kprof" "./$w"
done
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
cd "$out"
for w in $workloads; do
	for r in 1 2 3; do
		echo "$w $r plain=$(ms ./$w.plain) off=$(KPROF_MODE=off ms ./$w.kprof) sample=$(KPROF_MODE=sample KPROF_OUT=s.kprof ms ./$w.kprof)"
	done
	echo "$w exact-n10 plain=$(ms ./$w.plain -n 10) exact=$(KPROF_MODE=exact KPROF_OUT=x.kprof ms ./$w.kprof -n 10)"
done | tee runs.txt >&2
python3 - runs.txt <<'PY'
import sys, statistics, math
rows, exact = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    d = dict(x.split("=") for x in f[2:])
    if f[1] == "exact-n10":
        exact[f[0]] = int(d["exact"]) / int(d["plain"])
    else:
        rows.setdefault(f[0], []).append({k: int(v) for k, v in d.items()})
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
cols = ([], [], [])
print("| workload | plain (ms) | No Prof. | sample g=10000 | exact (-n 10) |")
print("| --- | ---: | ---: | ---: | ---: |")
for w, rs in rows.items():
    p = statistics.median(r["plain"] for r in rs)
    o = statistics.median(r["off"] for r in rs) / p
    s = statistics.median(r["sample"] for r in rs) / p
    for c, v in zip(cols, (o, s, exact[w])):
        c.append(v)
    print(f"| {w} | {p:.0f} | {o:.2f}× | {s:.2f}× | {exact[w]:.1f}× |")
print(f"| geometric mean | | {gm(cols[0]):.2f}× | {gm(cols[1]):.2f}× | {gm(cols[2]):.1f}× |")
PY

#!/usr/bin/env bash
# micro.sh runs the in-process benchmarks and checks of the root module and
# prints, for each, the figure that the performance targets are about: the
# handler beside its bare baseline (ns/op and allocs/op), the cost of a page
# at 1,000,000 pets over the cost at 1,000, appendPets over
# encoding/json.Marshal, the allocations per request, and the bytes per pet
# of memstore and those of them that the garbage collector scans. Each time
# is the median over COUNT runs.
#
# Usage: bench/micro.sh        (from anywhere in the repository)
#
# Environment: COUNT (default 6), BENCHTIME (500ms), OUT (a file to keep the
# raw benchmark output in, for benchstat: benchstat -col /impl OUT).
set -euo pipefail

COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-500ms}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$(mktemp)}
cd "$root"

echo "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3)"
echo "go test -run '^\$' -bench 'BenchmarkHandler|BenchmarkListScale|BenchmarkEncodePage' -benchmem -count $COUNT -benchtime $BENCHTIME ."
go test -run '^$' -bench 'BenchmarkHandler|BenchmarkListScale|BenchmarkEncodePage' -benchmem \
	-count "$COUNT" -benchtime "$BENCHTIME" . >"$out"

# medians: NAME MEDIAN_NS_OP MIN_NS_OP ALLOCS_OP for each benchmark.
medians() {
	awk '/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name)
		for (i = 2; i < NF; i++) {
			if ($(i + 1) == "ns/op") ns[name] = ns[name] " " $i
			if ($(i + 1) == "allocs/op") allocs[name] = $i
		}
		if (!(name in seen)) { seen[name] = 1; order[++n] = name }
	} END {
		for (k = 1; k <= n; k++) {
			name = order[k]
			c = split(substr(ns[name], 2), v, " ")
			for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
			m = (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
			print name, m, v[1], allocs[name]
		}
	}' "$out"
}
medians >"$out.medians"

echo
echo "handler beside its baseline (median ns/op; allocs/op):"
awk '$1 ~ /^BenchmarkHandler\// {
	split($1, p, "/"); op = substr(p[2], 4); impl = substr(p[3], 6)
	ns[op, impl] = $2; al[op, impl] = $4
	if (!(op in seen)) { seen[op] = 1; order[++n] = op }
} END {
	for (k = 1; k <= n; k++) {
		op = order[k]
		printf "  %-18s baseline %7.0f ns %2d allocs   petstore %7.0f ns %2d allocs   (%.1fx)\n",
			op, ns[op, "baseline"], al[op, "baseline"], ns[op, "petstore"], al[op, "petstore"], ns[op, "petstore"] / ns[op, "baseline"]
	}
}' "$out.medians"

echo
echo "GET /v1/pets?limit=20, 1,000,000 pets over 1,000 pets (target <= 1.10):"
awk '$1 ~ /^BenchmarkListScale\// {
	split($1, p, "/"); med[p[2], p[3]] = $2; low[p[2], p[3]] = $3; f[p[2]] = 1
} END {
	for (filter in f)
		printf "  %-18s median %5.0f / %5.0f ns = %.3f   min %5.0f / %5.0f ns = %.3f\n", filter,
			med[filter, "pets=1000000"], med[filter, "pets=1000"], med[filter, "pets=1000000"] / med[filter, "pets=1000"],
			low[filter, "pets=1000000"], low[filter, "pets=1000"], low[filter, "pets=1000000"] / low[filter, "pets=1000"]
}' "$out.medians"

echo
echo "encoding a page of 20 pets, appendPets over encoding/json.Marshal (target <= 0.50):"
awk '$1 ~ /^BenchmarkEncodePage\// { split($1, p, "/"); med[p[2]] = $2; low[p[2]] = $3 } END {
	a = "impl=appendPets"; j = "impl=encoding_json"
	printf "  median %.0f / %.0f ns = %.3f   min %.0f / %.0f ns = %.3f\n", med[a], med[j], med[a] / med[j], low[a], low[j], low[a] / low[j]
}' "$out.medians"
rm -f "$out.medians"

echo
echo "go test -count 1 -run 'TestPerfAllocs' -v .   (limits: list 8, get 5, create 7, 401 3)"
go test -count 1 -run 'TestPerfAllocs' -v . | sed -n 's/.*perf_allocs_test.go:[0-9]*: /  /p'
echo
echo "go test -count 1 -run 'TestPerfMemoryPerPet' -v ./memstore   (limits: 32 bytes a pet, under 1 of them scanned)"
go test -count 1 -run 'TestPerfMemoryPerPet' -v ./memstore | sed -n 's/.*bench_test.go:[0-9]*: /  /p'
if [ -z "${OUT:-}" ]; then rm -f "$out"; fi

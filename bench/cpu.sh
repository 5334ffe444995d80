#!/usr/bin/env bash
# cpu.sh compares builds of a package's tests by the CPU time that one
# benchmark takes per operation, counted by perf as task-clock over all the
# process's threads (so the garbage collector counts). Other work on a shared
# machine disturbs CPU time much less than the elapsed time that ns/op
# reports. Each round runs every binary once with -benchtime 1x and once with
# -benchtime Nx, one after another; the difference over N is the CPU time of
# an operation without the benchmark's setup. It prints every figure and then
# the median and the minimum for each binary.
#
# Usage: bench/cpu.sh BENCH N BINARY...
#
#	go test -c -o /tmp/a.test .          # one build
#	go test -c -o /tmp/b.test .          # the other, after a change
#	bench/cpu.sh 'BenchmarkHandler/^op=ListPets$/^impl=petstore$' 300000 /tmp/a.test /tmp/b.test
#
# Environment: ROUNDS (default 10). Needs perf (linux-perf).
set -euo pipefail

if [ $# -lt 3 ]; then
	sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 2
fi
command -v perf >/dev/null || { echo "cpu.sh: perf is not installed" >&2; exit 1; }
bench=$1 n=$2
shift 2
rounds=${ROUNDS:-10}

# taskclock BINARY BENCHTIME prints the milliseconds of CPU the run took.
taskclock() {
	perf stat -x, -e task-clock "$1" -test.run '^$' -test.bench "$bench" -test.benchtime "$2" -test.cpu 1 \
		2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq "$rounds"); do
	for b in "$@"; do
		one=$(taskclock "$b" 1x)
		all=$(taskclock "$b" "${n}x")
		awk -v r="$round" -v b="$b" -v one="$one" -v all="$all" -v n="$n" \
			'BEGIN { printf "round %d %s %.1f ns/op\n", r, b, (all - one) * 1e6 / n }' | tee -a "$out"
	done
done
echo
awk '{ v[$3] = v[$3] " " $4; if (!($3 in seen)) { seen[$3] = 1; order[++k] = $3 } } END {
	for (i = 1; i <= k; i++) {
		b = order[i]; c = split(substr(v[b], 2), a, " ")
		for (x = 1; x <= c; x++) for (y = x + 1; y <= c; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
		m = (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
		printf "%s: median %.1f ns/op, min %.1f, max %.1f, %d rounds\n", b, m, a[1], a[c], c
	}
}' "$out"

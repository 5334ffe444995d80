#!/usr/bin/env bash
# load.sh measures the throughput of the petstore server (cmd/petstore over
# memstore, seeded with 100,000 pets) against a bare net/http handler that
# answers with the same bytes from memory (bench/baseline), under the same
# load: wrk on 127.0.0.1, the same threads and connections. It alternates the
# two servers over several rounds, so that both see the same disturbances,
# and prints for each request the ratio petstore/baseline of requests per
# second with its spread over the rounds.
#
# Usage: bench/load.sh        (from anywhere in the repository)
#        TLS=1 bench/load.sh  (the petstore server over HTTPS)
#
# Environment: ROUNDS (default 10), DURATION in seconds per run (3), THREADS
# (2), CONNECTIONS (64), PETS (100000), PIN (1: servers on CPU 0, wrk on the
# other CPUs, with taskset; 0: no pinning), NICE (unset: run at normal
# priority; a niceness such as -10 runs servers and wrk ahead of other work on
# a shared machine, which needs root), PORT (18080; the baseline uses
# PORT+1), TLS (0: plain HTTP; 1: the petstore server serves HTTPS with a
# P-256 certificate made for the run by crypto/tls's generate_cert.go from
# the Go toolchain, and wrk speaks HTTP/1.1 over TLS to it, while the
# baseline stays on plain HTTP, so that the ratio is the cost of the handler
# and of TLS together; the targets are for plain HTTP). Installs wrk with
# apt-get when it is missing. With the defaults the script takes about four
# minutes.
set -euo pipefail

ROUNDS=${ROUNDS:-10}
DURATION=${DURATION:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
PETS=${PETS:-100000}
PIN=${PIN:-1}
PORT=${PORT:-18080}
TLS=${TLS:-0}
KEY=load-test-key-0123456789

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

if ! command -v wrk >/dev/null; then
	echo "installing wrk" >&2
	if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq wrk >/dev/null
fi

server_cpu=() load_cpu=()
if [ -n "${NICE:-}" ]; then
	server_cpu=(nice -n "$NICE")
	load_cpu=(nice -n "$NICE")
fi
if [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	server_cpu+=(taskset -c 0)
	load_cpu+=(taskset -c "1-$(($(nproc) - 1))")
fi

echo "building" >&2
(cd "$root/cmd/petstore" && go build -o "$work/petstore" .)
(cd "$root" && go build -o "$work/baseline" ./bench/baseline)

scheme=http tls_args=() baseline_env=()
if [ "$TLS" = 1 ]; then
	scheme=https
	(cd "$work" && go run "$(go env GOROOT)/src/crypto/tls/generate_cert.go" --host 127.0.0.1 --ecdsa-curve P256 2>/dev/null)
	tls_args=(-tls-cert "$work/cert.pem" -tls-key "$work/key.pem")
	baseline_env=(SSL_CERT_FILE="$work/cert.pem") # so that it trusts the certificate when it seeds
fi

PETSTORE_API_KEYS=$KEY "${server_cpu[@]}" "$work/petstore" -addr "127.0.0.1:$PORT" "${tls_args[@]}" >"$work/petstore.log" 2>&1 &
pids+=($!)
env "${baseline_env[@]}" "${server_cpu[@]}" "$work/baseline" -addr "127.0.0.1:$((PORT + 1))" -target "$scheme://127.0.0.1:$PORT/v1" \
	-key "$KEY" -seed "$PETS" >"$work/baseline.log" 2>&1 &
pids+=($!)
for _ in $(seq 600); do
	grep -q '^ready' "$work/baseline.log" && break
	if ! kill -0 "${pids[1]}" 2>/dev/null; then
		cat "$work/petstore.log" "$work/baseline.log" >&2
		exit 1
	fi
	sleep 0.1
done
grep -q '^ready' "$work/baseline.log" || { cat "$work/baseline.log" >&2; exit 1; }
cat "$work/baseline.log" >&2

# run SERVER OP: one wrk run; prints requests per second.
run() {
	local url=$scheme://127.0.0.1:$PORT/v1 args=()
	[ "$1" = baseline ] && url=http://127.0.0.1:$((PORT + 1))/v1
	case $2 in
	list) url+="/pets?limit=20" ;;
	get) url+="/pets/12345" ;;
	create) url+="/pets"; args=(-s "$root/bench/create.lua") ;;
	esac
	local out
	out=$("${load_cpu[@]}" wrk -t "$THREADS" -c "$CONNECTIONS" -d "${3:-$DURATION}s" \
		-H "Authorization: Bearer $KEY" "${args[@]}" "$url")
	if grep -q 'Non-2xx' <<<"$out"; then
		echo "$1 $2: responses other than 2xx; the figures would not compare:" >&2
		echo "$out" >&2
		exit 1
	fi
	if grep -q 'Socket errors' <<<"$out"; then
		echo "$1 $2: $(grep 'Socket errors' <<<"$out")" >&2
	fi
	awk '/^Requests\/sec:/ { print $2 }' <<<"$out"
}

ops=(list get create)
declare -A ratios rps_p rps_b
echo "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3)"
echo "wrk -t $THREADS -c $CONNECTIONS, $ROUNDS rounds of ${DURATION}s per server and request, pinned: $([ "$PIN" = 1 ] && echo yes || echo no), niceness: ${NICE:-0}"
echo "petstore over $scheme, baseline over http; $(uptime | sed 's/.*\(load average\)/\1/')"
# Warm both servers up (heap growth, first connections) before measuring.
for op in "${ops[@]}"; do
	run petstore "$op" 1 >/dev/null
	run baseline "$op" 1 >/dev/null
done
for round in $(seq "$ROUNDS"); do
	for op in "${ops[@]}"; do
		# Alternate which server goes first, so neither always follows the other.
		if ((round % 2)); then
			p=$(run petstore "$op"); b=$(run baseline "$op")
		else
			b=$(run baseline "$op"); p=$(run petstore "$op")
		fi
		r=$(awk -v p="$p" -v b="$b" 'BEGIN { printf "%.3f", p / b }')
		printf 'round %d %-6s petstore %9.0f req/s  baseline %9.0f req/s  ratio %s\n' "$round" "$op" "$p" "$b" "$r"
		ratios[$op]+="$r "
		rps_p[$op]+="$p "
		rps_b[$op]+="$b "
	done
done

# spread FORMAT WORDS...: min, median and max of the words.
spread() {
	local f=$1
	shift
	tr ' ' '\n' <<<"$*" | grep . | sort -g | awk -v f="$f" '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "min " f "  median " f "  max " f, v[1], m, v[NR] }'
}
echo
echo "requests per second over $ROUNDS rounds:"
for op in "${ops[@]}"; do
	printf '%-6s petstore %s\n' "$op" "$(spread %6.0f ${rps_p[$op]})"
	printf '%-6s baseline %s\n' "$op" "$(spread %6.0f ${rps_b[$op]})"
done
echo
echo "ratio of requests per second, petstore over $scheme / baseline over http, over $ROUNDS rounds:"
declare -A target=([list]=0.90 [get]=0.92 [create]=0.85)
for op in "${ops[@]}"; do
	if [ "$TLS" = 1 ]; then
		printf '%-6s %s\n' "$op" "$(spread %.3f ${ratios[$op]})"
	else
		printf '%-6s %s  (target: median >= %s)\n' "$op" "$(spread %.3f ${ratios[$op]})" "${target[$op]}"
	fi
done
echo "$(uptime | sed 's/.*\(load average\)/\1/') at the end"

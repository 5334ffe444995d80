#!/usr/bin/env bash
# load.sh measures the throughput of the petstore server (cmd/petstore over
# memstore, with -store memory, seeded with 100,000 pets) against a bare
# net/http handler that answers with the same bytes from memory
# (bench/baseline), under the same
# load: wrk on 127.0.0.1, the same threads and connections. It alternates the
# two servers over several rounds, so that both see the same disturbances,
# and prints for each request the ratio petstore/baseline of requests per
# second with its spread over the rounds, and each server's CPU time per
# request (from /proc), which other work on the machine disturbs far less.
#
# Usage: bench/load.sh        (from anywhere in the repository)
#        TLS=1 bench/load.sh  (adds the petstore server over HTTPS)
#        METRICS=1 bench/load.sh  (adds the petstore server with metrics on)
#
# Environment: ROUNDS (default 10), DURATION in seconds per run (3), THREADS
# (2), CONNECTIONS (64), PETS (100000), PIN (1: servers on CPU 0, wrk on the
# other CPUs, with taskset; 0: no pinning), NICE (unset: run at normal
# priority; a niceness such as -10 runs servers and wrk ahead of other work on
# a shared machine, which needs root), PORT (18080; the baseline uses
# PORT+1), TLS (0: plain HTTP only; 1: also a second petstore server, over
# HTTPS on PORT+2, in the same rounds, and the ratio HTTPS/HTTP; see below).
# AGAINST (unset; a git revision such as main or HEAD~3: its cmd/petstore
# runs as another server, on PORT+4, seeded the same way, in the same rounds,
# and the script prints the ratios petstore/against: a change measured before
# and after in one run). METRICS (0; 1: also a petstore server with metrics
# on, started with -admin-addr on PORT+6 and serving on PORT+5, seeded the
# same way, in the same rounds, and the ratios metrics/petstore of requests
# per second and of CPU time per request; at the end it prints the requests
# that its /metrics counted). HOST (0; 1: also the library's handler over
# memstore in a bare http.Server, bench/host, on PORT+7, seeded the same way,
# in the same rounds, and the ratios petstore/host: what cmd/petstore costs
# over a host that mounts the library). Installs wrk with apt-get when it is
# missing.
# With the defaults the script takes about four minutes, a minute and a half
# more for each of TLS=1, METRICS=1 and AGAINST.
#
# With TLS=1 the HTTPS server gets a P-256 certificate made for the run with
# generate_cert.go from the Go toolchain (crypto/tls), is seeded like the
# first (by a second baseline process, which is not measured), and wrk
# speaks HTTP/1.1 over TLS 1.3 to it on connections that it keeps open, so
# the figures are the cost of encrypting requests and responses, not of
# handshakes. The three servers take turns in each round.
set -euo pipefail

ROUNDS=${ROUNDS:-10}
DURATION=${DURATION:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
PETS=${PETS:-100000}
PIN=${PIN:-1}
PORT=${PORT:-18080}
TLS=${TLS:-0}
METRICS=${METRICS:-0}
HOST=${HOST:-0}
KEY=load-test-key-0123456789

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -d "$work/against-src" ]; then git -C "$root" worktree remove --force "$work/against-src" 2>/dev/null || true; fi
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

servers=(petstore baseline)
declare -A url=([petstore]=http://127.0.0.1:$PORT/v1 [baseline]=http://127.0.0.1:$((PORT + 1))/v1)
if [ "$TLS" = 1 ]; then
	servers=(petstore https baseline)
	url[https]=https://127.0.0.1:$((PORT + 2))/v1
	(cd "$work" && go run "$(go env GOROOT)/src/crypto/tls/generate_cert.go" --host 127.0.0.1 --ecdsa-curve P256 2>/dev/null)
fi
if [ -n "${AGAINST:-}" ]; then
	servers+=(against)
	url[against]=http://127.0.0.1:$((PORT + 4))/v1
	git -C "$root" worktree add --quiet --detach "$work/against-src" "$AGAINST"
	(cd "$work/against-src/cmd/petstore" && go build -o "$work/against" .)
fi
if [ "$METRICS" = 1 ]; then
	servers+=(metrics)
	url[metrics]=http://127.0.0.1:$((PORT + 5))/v1
fi
if [ "$HOST" = 1 ]; then
	servers+=(host)
	url[host]=http://127.0.0.1:$((PORT + 7))/v1
	(cd "$root" && go build -o "$work/host" ./bench/host)
fi

# memory_store BINARY: the flag that keeps the pets of a cmd/petstore build
# in memory, which is what the script measures; empty for builds from before
# -store, which always did.
# It also turns off the per-caller budgets and shares of builds that have
# them: the load comes from one key, far past any budget, and the script
# measures the handler, not the limiter.
memory_store() {
	local help
	help=$("$1" -h 2>&1 || true) # whole, so that grep -q cannot cut it short (SIGPIPE, under pipefail)
	if grep -qE -- '^ +-store [a-z]' <<<"$help"; then echo -n "-store memory"; fi
	if grep -qE -- '^ +-read-limit ' <<<"$help"; then echo -n " -read-limit off -create-limit off"; fi
	if grep -qE -- '^ +-max-share ' <<<"$help"; then echo -n " -max-share 1"; fi
	if grep -qE -- '^ +-max-in-flight ' <<<"$help"; then echo -n " -max-in-flight 0"; fi
}
petstore_store=$(memory_store "$work/petstore")
against_store=
if [ -n "${AGAINST:-}" ]; then against_store=$(memory_store "$work/against"); fi

declare -A pid_of
# start NAME ARGS...: starts a server process, logging to $work/NAME.log.
start() {
	local name=$1
	shift
	"${server_cpu[@]}" "$@" >"$work/$name.log" 2>&1 &
	pids+=($!)
	pid_of[$name]=$!
}
# ready NAME: waits for the baseline process NAME to have seeded its
# petstore server and to serve.
ready() {
	local pid=${pids[-1]}
	for _ in $(seq 600); do
		grep -q '^ready' "$work/$1.log" && break
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$work"/*.log >&2
			exit 1
		fi
		sleep 0.1
	done
	grep -q '^ready' "$work/$1.log" || { cat "$work/$1.log" >&2; exit 1; }
	cat "$work/$1.log" >&2
}

PETSTORE_API_KEYS=$KEY start petstore "$work/petstore" $petstore_store -addr "127.0.0.1:$PORT"
start baseline "$work/baseline" -addr "127.0.0.1:$((PORT + 1))" -target "${url[petstore]}" -key "$KEY" -seed "$PETS"
ready baseline
if [ "$TLS" = 1 ]; then
	PETSTORE_API_KEYS=$KEY start https "$work/petstore" $petstore_store -addr "127.0.0.1:$((PORT + 2))" \
		-tls-cert "$work/cert.pem" -tls-key "$work/key.pem"
	# Seeds the HTTPS server, trusting its certificate through SSL_CERT_FILE.
	SSL_CERT_FILE=$work/cert.pem start seed-https "$work/baseline" -addr "127.0.0.1:$((PORT + 3))" \
		-target "${url[https]}" -key "$KEY" -seed "$PETS"
	ready seed-https
fi
if [ -n "${AGAINST:-}" ]; then
	PETSTORE_API_KEYS=$KEY start against "$work/against" $against_store -addr "127.0.0.1:$((PORT + 4))"
	"$work/baseline" -seed-only -target "${url[against]}" -key "$KEY" -seed "$PETS" >&2
fi
if [ "$METRICS" = 1 ]; then
	PETSTORE_API_KEYS=$KEY start metrics "$work/petstore" $petstore_store -addr "127.0.0.1:$((PORT + 5))" \
		-admin-addr "127.0.0.1:$((PORT + 6))"
	"$work/baseline" -seed-only -target "${url[metrics]}" -key "$KEY" -seed "$PETS" >&2
fi
if [ "$HOST" = 1 ]; then
	start host "$work/host" -addr "127.0.0.1:$((PORT + 7))" -key "$KEY"
	"$work/baseline" -seed-only -target "${url[host]}" -key "$KEY" -seed "$PETS" >&2
fi

# cpu_ticks PID: the CPU time that process PID has used, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
tick=$(getconf CLK_TCK)

# run SERVER OP: one wrk run; prints requests per second, and the server's
# CPU time per request in microseconds.
run() {
	local u=${url[$1]} args=()
	case $2 in
	list) u+="/pets?limit=20" ;;
	get) u+="/pets/12345" ;;
	create) u+="/pets"; args=(-s "$root/bench/create.lua") ;;
	esac
	local out pid=${pid_of[$1]} t0 t1
	t0=$(cpu_ticks "$pid")
	out=$("${load_cpu[@]}" wrk -t "$THREADS" -c "$CONNECTIONS" -d "${3:-$DURATION}s" \
		-H "Authorization: Bearer $KEY" "${args[@]}" "$u")
	t1=$(cpu_ticks "$pid")
	if grep -q 'Non-2xx' <<<"$out"; then
		echo "$1 $2: responses other than 2xx; the figures would not compare:" >&2
		echo "$out" >&2
		exit 1
	fi
	if grep -q 'Socket errors' <<<"$out"; then
		echo "$1 $2: $(grep 'Socket errors' <<<"$out")" >&2
	fi
	awk -v ticks=$((t1 - t0)) -v hz="$tick" '
		/ requests in / { n = $1 }
		/^Requests\/sec:/ { rps = $2 }
		END { printf "%s %.2f\n", rps, ticks / hz * 1e6 / n }' <<<"$out"
}

# load prints the load average, as uptime prints it.
load() { uptime | sed 's/.*load average: //'; }

ops=(list get create)
declare -A ratios tls_ratios host_ratios against_ratios metrics_ratios metrics_cpu rps cpu tls_cpu
echo "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3)"
echo "wrk -t $THREADS -c $CONNECTIONS, $ROUNDS rounds of ${DURATION}s per server and request, pinned: $([ "$PIN" = 1 ] && echo yes || echo no), niceness: ${NICE:-0}"
echo "servers: ${servers[*]}$([ "$TLS" = 1 ] && echo " (petstore: plain HTTP; https: the same server over HTTPS)"); load average at the start: $(load)"
# Warm the servers up (heap growth, first connections) before measuring.
for op in "${ops[@]}"; do
	for s in "${servers[@]}"; do run "$s" "$op" 1 >/dev/null; done
done
n=${#servers[@]}
for round in $(seq "$ROUNDS"); do
	for op in "${ops[@]}"; do
		# Rotate which server goes first, so that none always follows another.
		declare -A got=() us=()
		for i in $(seq 0 $((n - 1))); do
			s=${servers[$(((round + i) % n))]}
			read -r got[$s] us[$s] < <(run "$s" "$op")
		done
		line=$(printf 'round %d %-6s' "$round" "$op")
		for s in "${servers[@]}"; do
			line+=$(printf '  %s %6.0f req/s %5.1f us' "$s" "${got[$s]}" "${us[$s]}")
			rps[$s.$op]+="${got[$s]} "
			cpu[$s.$op]+="${us[$s]} "
		done
		r=$(awk -v p="${got[petstore]}" -v b="${got[baseline]}" 'BEGIN { printf "%.3f", p / b }')
		ratios[$op]+="$r "
		line+="  ratio $r"
		if [ "$TLS" = 1 ]; then
			r=$(awk -v t="${got[https]}" -v p="${got[petstore]}" 'BEGIN { printf "%.3f", t / p }')
			tls_ratios[$op]+="$r "
			line+="  https/http $r"
			r=$(awk -v t="${us[https]}" -v p="${us[petstore]}" 'BEGIN { printf "%.3f", t / p }')
			tls_cpu[$op]+="$r "
			line+=" (CPU $r)"
		fi
		if [ "$METRICS" = 1 ]; then
			r=$(awk -v m="${got[metrics]}" -v p="${got[petstore]}" 'BEGIN { printf "%.3f", m / p }')
			metrics_ratios[$op]+="$r "
			line+="  metrics/petstore $r"
			r=$(awk -v m="${us[metrics]}" -v p="${us[petstore]}" 'BEGIN { printf "%.3f", m / p }')
			metrics_cpu[$op]+="$r "
			line+=" (CPU $r)"
		fi
		if [ "$HOST" = 1 ]; then
			r=$(awk -v p="${got[petstore]}" -v h="${got[host]}" 'BEGIN { printf "%.3f", p / h }')
			host_ratios[$op]+="$r "
			line+="  petstore/host $r"
		fi
		if [ -n "${AGAINST:-}" ]; then
			r=$(awk -v p="${got[petstore]}" -v a="${got[against]}" 'BEGIN { printf "%.3f", p / a }')
			against_ratios[$op]+="$r "
			line+="  petstore/against $r"
		fi
		echo "$line"
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
	for s in "${servers[@]}"; do
		printf '%-6s %-8s %s\n' "$op" "$s" "$(spread %6.0f ${rps[$s.$op]})"
	done
done
echo
echo "server CPU time per request, microseconds, over $ROUNDS rounds:"
for op in "${ops[@]}"; do
	for s in "${servers[@]}"; do
		printf '%-6s %-8s %s\n' "$op" "$s" "$(spread %5.1f ${cpu[$s.$op]})"
	done
done
echo
echo "ratio of requests per second, petstore / baseline (both plain HTTP), over $ROUNDS rounds:"
declare -A target=([list]=0.95 [get]=0.95 [create]=0.95)
for op in "${ops[@]}"; do
	printf '%-6s %s  (target: median >= %s)\n' "$op" "$(spread %.3f ${ratios[$op]})" "${target[$op]}"
done
if [ "$TLS" = 1 ]; then
	echo
	echo "ratio of requests per second, petstore over HTTPS / petstore over HTTP, over $ROUNDS rounds:"
	for op in "${ops[@]}"; do
		printf '%-6s %s\n' "$op" "$(spread %.3f ${tls_ratios[$op]})"
	done
	echo
	echo "ratio of server CPU time per request, petstore over HTTPS / petstore over HTTP, over $ROUNDS rounds:"
	for op in "${ops[@]}"; do
		printf '%-6s %s\n' "$op" "$(spread %.3f ${tls_cpu[$op]})"
	done
fi
if [ "$METRICS" = 1 ]; then
	echo
	echo "ratio of requests per second, petstore with metrics / without (both plain HTTP), over $ROUNDS rounds:"
	for op in "${ops[@]}"; do
		printf '%-6s %s\n' "$op" "$(spread %.3f ${metrics_ratios[$op]})"
	done
	echo "(target: list median >= 0.97)"
	echo
	echo "ratio of server CPU time per request, petstore with metrics / without, over $ROUNDS rounds:"
	for op in "${ops[@]}"; do
		printf '%-6s %s\n' "$op" "$(spread %.3f ${metrics_cpu[$op]})"
	done
	echo
	echo "requests that the metrics server's /metrics counted (seeding and warm-up included), by route, method and status:"
	curl -s "http://127.0.0.1:$((PORT + 6))/metrics" | grep '^http_server_request_duration_seconds_count' |
		sed -E 's/^[^{]*[{](.*)[}] (.*)$/\2 \1/; s/,?otel_scope_[a-z_]+="[^"]*"//g'
fi
if [ "$HOST" = 1 ]; then
	echo
	echo "ratio of requests per second, petstore / host (the library in a bare http.Server), over $ROUNDS rounds:"
	for op in "${ops[@]}"; do
		printf '%-6s %s  (target: median >= 0.98)\n' "$op" "$(spread %.3f ${host_ratios[$op]})"
	done
fi
if [ -n "${AGAINST:-}" ]; then
	echo
	echo "ratio of requests per second, petstore / $AGAINST (both plain HTTP), over $ROUNDS rounds:"
	for op in "${ops[@]}"; do
		printf '%-6s %s\n' "$op" "$(spread %.3f ${against_ratios[$op]})"
	done
fi
echo "load average at the end: $(load)"

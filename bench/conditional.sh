#!/usr/bin/env bash
# conditional.sh measures what If-None-Match saves on a full page: wrk on
# 127.0.0.1 against cmd/petstore (-store memory, seeded with PETS pets by
# bench/baseline -seed-only), for a full page of 100 and of 20 pets, asked
# without If-None-Match (200 with the body) and with the page's ETag (304
# without one), the two alternating over ROUNDS rounds. It prints, for each
# run, requests per second and the server's CPU time per request (from
# /proc), then the medians.
#
# Usage: bench/conditional.sh   (from anywhere in the repository)
# Environment: ROUNDS (4), DURATION in seconds per run (3), CONNECTIONS (32),
# PETS (10000), PORT (18190). wrk runs on CPU 1 (taskset), one thread.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-4} DURATION=${DURATION:-3} CONNECTIONS=${CONNECTIONS:-32} PETS=${PETS:-10000} PORT=${PORT:-18190}
KEY=conditional-key-0123456789
work=$(mktemp -d)
go build -o "$work/petstore" ./cmd/petstore
go build -o "$work/baseline" ./bench/baseline
PETSTORE_API_KEYS=$KEY "$work/petstore" -store memory -addr "127.0.0.1:$PORT" >"$work/server.log" 2>&1 &
srv=$!
trap 'kill $srv; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/v1/openapi.json" && break; sleep 0.1; done
"$work/baseline" -seed-only -target "http://127.0.0.1:$PORT/v1" -key "$KEY" -seed "$PETS" >/dev/null
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for target in "/v1/pets?limit=100&cursor=rs" "/v1/pets?limit=20&cursor=rs"; do
	url="http://127.0.0.1:$PORT$target"
	tag=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $KEY" "$url" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}')
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" -H "If-None-Match: $tag" "$url")
	echo "GET $target: ETag $tag; with If-None-Match: $code"
	: >"$work/no" && : >"$work/yes"
	for round in $(seq "$ROUNDS"); do
		for cond in no yes; do
			hdr=(-H "Authorization: Bearer $KEY")
			[ "$cond" = yes ] && hdr+=(-H "If-None-Match: $tag")
			t0=$(awk '{print $14+$15}' "/proc/$srv/stat")
			out=$(taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "${hdr[@]}" "$url")
			t1=$(awk '{print $14+$15}' "/proc/$srv/stat")
			rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
			reqs=$(echo "$out" | awk '/requests in/ {print $1}')
			cpu=$(awk -v a="$t0" -v b="$t1" -v n="$reqs" -v h="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f", (b-a)/h*1e6/n}')
			echo "round $round  if-none-match=$cond  $rps requests/s  $cpu µs CPU/request"
			echo "$rps $cpu" >>"$work/$cond"
		done
	done
	for cond in no yes; do
		echo "median if-none-match=$cond: $(cut -d' ' -f1 "$work/$cond" | median) requests/s, $(cut -d' ' -f2 "$work/$cond" | median) µs CPU/request"
	done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

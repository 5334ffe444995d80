#!/usr/bin/env bash
# instructions.sh counts the user-space instructions that a server executes
# per request under valgrind's callgrind, for the requests of load.sh (a
# list of 20, a get, a create) against cmd/petstore over memstore, the bare
# handler of bench/baseline and, with AGAINST, the cmd/petstore of another
# revision. A count does not depend on what else the machine runs, so it
# compares two builds where load.sh's medians move more between runs than
# the difference looked for; it leaves out the kernel's work (the same for
# every server) and says nothing of caches, so it shows where a difference
# is, and load.sh what it is worth.
#
# Usage: bench/instructions.sh                 (from anywhere in the repository)
#        AGAINST=7df4003 bench/instructions.sh
#        HOST=1 bench/instructions.sh        (adds bench/host, the library's
#                                             handler in a bare http.Server)
#
# Environment: PETS (13000, enough for the get of pet 12345), DURATION in
# seconds of wrk per server and request (15; 16 connections), PORT (19500;
# the script uses PORT to PORT+4). Installs valgrind and wrk with apt-get
# when they are missing. The servers are
# built with CGO_ENABLED=0 and run with GODEBUG=asyncpreemptoff=1, without
# which callgrind stops on Go's preemption signals. It takes about seven
# minutes, most of it seeding under valgrind.
set -euo pipefail

PETS=${PETS:-13000}
DURATION=${DURATION:-15}
PORT=${PORT:-19500}
KEY=load-test-key-0123456789
if ! command -v valgrind >/dev/null || ! command -v wrk >/dev/null; then
	echo "installing valgrind and wrk" >&2
	if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq valgrind wrk >/dev/null
fi

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	if [ -d "$work/against-src" ]; then git -C "$root" worktree remove --force "$work/against-src"; fi
	rm -rf "$work"
}
trap cleanup EXIT

export CGO_ENABLED=0 GODEBUG=asyncpreemptoff=1 PETSTORE_API_KEYS=$KEY
(cd "$root/cmd/petstore" && go build -o "$work/petstore" .)
(cd "$root" && go build -o "$work/baseline" ./bench/baseline)
servers=(petstore baseline)
if [ -n "${AGAINST:-}" ]; then
	git -C "$root" worktree add --quiet --detach "$work/against-src" "$AGAINST"
	(cd "$work/against-src/cmd/petstore" && go build -o "$work/against" .)
	servers+=(against)
fi
if [ "${HOST:-0}" = 1 ]; then
	(cd "$root" && go build -o "$work/host" ./bench/host)
	servers+=(host)
fi

# flags BINARY: the flags of load.sh for a cmd/petstore build (see there).
flags() {
	local help
	help=$("$1" -h 2>&1 || true) # whole, so that grep -q cannot cut it short (SIGPIPE, under pipefail)
	if grep -qE -- '^ +-store [a-z]' <<<"$help"; then echo -n "-store memory"; fi
	if grep -qE -- '^ +-read-limit ' <<<"$help"; then echo -n " -read-limit off -create-limit off"; fi
	if grep -qE -- '^ +-max-share ' <<<"$help"; then echo -n " -max-share 1"; fi
	if grep -qE -- '^ +-max-in-flight ' <<<"$help"; then echo -n " -max-in-flight 0"; fi
}
# waitport PORT: waits for a server to answer on PORT.
waitport() {
	for _ in $(seq 600); do
		curl -s -o /dev/null "http://127.0.0.1:$1/" && return
		sleep 0.2
	done
	echo "instructions.sh: nothing answers on port $1" >&2
	exit 1
}

declare -A pid_of port_of=([petstore]=$((PORT + 1)) [against]=$((PORT + 2)) [baseline]=$((PORT + 3)) [host]=$((PORT + 4)))
# The baseline records its answers from a petstore server that runs natively.
"$work/petstore" $(flags "$work/petstore") -addr "127.0.0.1:$PORT" >"$work/recorded.log" 2>&1 &
pids+=($!)
waitport "$PORT"
for s in "${servers[@]}"; do
	if [ "$s" = baseline ]; then
		cmd=("$work/baseline" -addr "127.0.0.1:${port_of[$s]}" -target "http://127.0.0.1:$PORT/v1" -key "$KEY" -seed "$PETS")
	elif [ "$s" = host ]; then
		cmd=("$work/host" -addr "127.0.0.1:${port_of[$s]}" -key "$KEY")
	else
		cmd=("$work/$s" $(flags "$work/$s") -addr "127.0.0.1:${port_of[$s]}")
	fi
	valgrind --tool=callgrind --callgrind-out-file="$work/$s.out" "${cmd[@]}" >"$work/$s.log" 2>&1 &
	pids+=($!)
	pid_of[$s]=$!
done
for s in petstore against host; do
	if [ -n "${pid_of[$s]:-}" ]; then
		waitport "${port_of[$s]}"
		"$work/baseline" -seed-only -target "http://127.0.0.1:${port_of[$s]}/v1" -key "$KEY" -seed "$PETS" >/dev/null
	fi
done
until grep -q '^ready' "$work/baseline.log"; do sleep 1; done

echo "user-space instructions per request, $DURATION s of wrk -c 16 per server and request, $PETS pets"
for op in list get create; do
	line=$(printf '%-6s' "$op")
	for s in "${servers[@]}"; do
		u=http://127.0.0.1:${port_of[$s]}/v1 args=()
		case $op in
		list) u+="/pets?limit=20" ;;
		get) u+="/pets/12345" ;;
		create) u+="/pets" args=(-s "$root/bench/create.lua") ;;
		esac
		wrk -t 1 -c 16 -d 3s -H "Authorization: Bearer $KEY" "${args[@]}" "$u" >/dev/null # warm up
		# A dump zeroes the counts, so the next one holds only the requests.
		callgrind_control -d "before-$op" "${pid_of[$s]}" >/dev/null 2>&1
		out=$(wrk -t 1 -c 16 -d "${DURATION}s" -H "Authorization: Bearer $KEY" "${args[@]}" "$u")
		callgrind_control -d "$op" "${pid_of[$s]}" >/dev/null 2>&1
		if grep -q 'Non-2xx' <<<"$out"; then echo "$s $op: answers other than 2xx" >&2; exit 1; fi
		n=$(awk '/ requests in / { print $1 }' <<<"$out")
		sleep 1
		f=$(grep -l "^desc: Trigger: dump $op\$" "$work/$s.out".* | head -1)
		line+=$(awk -v s="$s" -v n="$n" '/^totals:/ { printf "  %s %7.0f", s, $2 / n }' "$f")
	done
	echo "$line"
done

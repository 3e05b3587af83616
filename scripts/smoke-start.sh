#!/usr/bin/env bash
# Starts the service as a user would (`npm start`, embedded database, demo data),
# checks /health and the demo login, then stops it with SIGTERM to npm, starts
# it again and stops it with SIGINT to its process group.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
log="$dir/server.log"
# Its own process group, as under a supervisor; the group is killed on exit whatever happens.
start() {
  FEEGATE_DATA_DIR="$dir/data" PORT="$port" setsid npm start >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  cat "$log"; echo "smoke: npm start did not serve" >&2; exit 1
}
# Waits until no process of npm's group is left (node must not outlive npm).
stopped() {
  for _ in $(seq 1 60); do pgrep -g "$pid" >/dev/null || return 0; sleep 0.25; done
  ps -o pid,ppid,cmd -g "$pid" >&2; return 1
}
# `|| true`: the group is usually gone by now, and under set -e a failed kill here
# would turn a passing run into exit 1.
cleanup() { [ -n "${pid:-}" ] && kill -KILL -- "-$pid" 2>/dev/null || true; [ -n "${KEEP:-}" ] && cat "$log"; rm -rf "$dir"; }
trap cleanup EXIT

start
curl -sf "http://127.0.0.1:$port/health" | grep -q '"ok"' || { cat "$log"; echo "smoke: /health failed" >&2; exit 1; }
curl -sf "http://127.0.0.1:$port/ready" >/dev/null || { cat "$log"; echo "smoke: /ready failed" >&2; exit 1; }
grep -q "ops@acme.test" "$log" || { cat "$log"; echo "smoke: no demo banner" >&2; exit 1; }
token=$(curl -sf -X POST "http://127.0.0.1:$port/v1/login" -H 'Content-Type: application/json' \
  -d '{"user":"ops@acme.test","password":"acme-demo-password"}' | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).token.access_token))")
curl -sf "http://127.0.0.1:$port/v1/users/me" -H "Authorization: Bearer $token" | grep -q '"CUSTOMER"' || { echo "smoke: users/me failed" >&2; exit 1; }

# A supervisor signals the npm process itself, not its group.
kill -TERM "$pid"
stopped || { echo "smoke: SIGTERM to npm left a process behind" >&2; exit 1; }
grep -q '"signal":"SIGTERM","msg":"shutting down' "$log" && grep -q '"msg":"closed"' "$log" || { cat "$log"; echo "smoke: no graceful shutdown on SIGTERM" >&2; exit 1; }

# Ctrl-C in a terminal signals the whole group; the data written before is kept.
start
grep -q "ops@acme.test" "$log" && { cat "$log"; echo "smoke: demo data loaded twice" >&2; exit 1; }
kill -INT -- "-$pid"
stopped || { echo "smoke: SIGINT to the group left a process behind" >&2; exit 1; }
grep -q '"signal":"SIGINT","msg":"shutting down' "$log" && grep -q '"msg":"closed"' "$log" || { cat "$log"; echo "smoke: no graceful shutdown on SIGINT" >&2; exit 1; }
echo "smoke: npm start serves, demo login works, SIGTERM to npm and SIGINT to its group stop it: ok"

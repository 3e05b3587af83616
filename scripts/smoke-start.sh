#!/usr/bin/env bash
# Starts the service as a user would (`npm start`, embedded database, demo data),
# checks /health and the demo login, then stops it with SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
log="$dir/server.log"
# Its own process group, so SIGTERM reaches node through npm and sh.
FEEGATE_DATA_DIR="$dir/data" PORT="$port" setsid npm start >"$log" 2>&1 &
pid=$!
cleanup() { kill -KILL -- "-$pid" 2>/dev/null || true; [ -n "${KEEP:-}" ] && cat "$log"; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" | grep -q '"ok"' || { cat "$log"; echo "smoke: /health failed" >&2; exit 1; }
curl -sf "http://127.0.0.1:$port/ready" >/dev/null || { cat "$log"; echo "smoke: /ready failed" >&2; exit 1; }
grep -q "ops@acme.test" "$log" || { cat "$log"; echo "smoke: no demo banner" >&2; exit 1; }
token=$(curl -sf -X POST "http://127.0.0.1:$port/v1/login" -H 'Content-Type: application/json' \
  -d '{"user":"ops@acme.test","password":"acme-demo-password"}' | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).token.access_token))")
curl -sf "http://127.0.0.1:$port/v1/users/me" -H "Authorization: Bearer $token" | grep -q '"CUSTOMER"' || { echo "smoke: users/me failed" >&2; exit 1; }
kill -TERM -- "-$pid"
for _ in $(seq 1 40); do pgrep -g "$pid" >/dev/null || break; sleep 0.25; done
if pgrep -g "$pid" >/dev/null; then echo "smoke: server did not stop on SIGTERM" >&2; exit 1; fi
grep -q "shutting down" "$log" || { cat "$log"; echo "smoke: no graceful shutdown" >&2; exit 1; }
echo "smoke: npm start serves, demo login works, SIGTERM stops it: ok"

#!/bin/sh
# npm run check:pack — the package `npm pack` makes installs and runs without the repository: packs it (the
# prepack script builds dist/), installs the tarball globally into a temporary prefix, runs `vellum --version`
# and `vellum --help`, then starts the node on a temporary data directory, waits for /ping and stops it with
# SIGTERM. Fails (non-zero) at the first step that does not do what it should. Needs the npm registry (or
# npm's cache) for the package's dependencies.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/vellum-pack-XXXXXX")
node_pid=""
cleanup() {
  if [ -n "$node_pid" ] && kill -0 "$node_pid" 2>/dev/null; then kill -KILL "$node_pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '%s\n' "check:pack: $*"; }
fail() { printf '%s\n' "check:pack: FAILED: $*" >&2; exit 1; }

step "packing"
tarball=$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)
[ -f "$work/$tarball" ] || fail "npm pack gave no tarball"
step "packed $tarball ($(wc -c < "$work/$tarball") bytes): $(tar -tzf "$work/$tarball" | tr '\n' ' ')"

step "installing it globally into $work/prefix"
npm install --global --prefix "$work/prefix" --prefer-offline --no-audit --no-fund --loglevel=error "$work/$tarball" >/dev/null
vellum="$work/prefix/bin/vellum"
[ -x "$vellum" ] || fail "no vellum command in the prefix"
if [ -d "$work/prefix/lib/node_modules/vellum/node_modules/tsx" ] || [ -d "$work/prefix/lib/node_modules/tsx" ]; then
  fail "tsx was installed with the package"
fi

# Away from the repository, so nothing can come from its node_modules.
cd "$work"
version=$("$vellum" --version)
step "vellum --version: $version"
case "$version" in *0.*) ;; *) fail "unexpected --version output" ;; esac
"$vellum" --help | grep -q -- "--node-port" || fail "--help does not list --node-port"
step "vellum --help lists the options"

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$vellum" --db "$work/data" --node-port "$port" > "$work/node.log" 2>&1 &
node_pid=$!
i=0
until curl -fsS "http://127.0.0.1:$port/ping" >/dev/null 2>&1; do
  i=$((i + 1))
  if [ "$i" -gt 300 ] || ! kill -0 "$node_pid" 2>/dev/null; then cat "$work/node.log" >&2; fail "the node did not answer /ping"; fi
  sleep 0.1
done
step "the node answered /ping on port $port (pid $node_pid)"
# A body of 64 KiB or more is parsed on the worker thread, whose module must have been packed beside main.mjs.
node -e '
  const data = "x".repeat(200 * 1024)
  const body = JSON.stringify([{ eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4", eventType: "big", data: { data } }])
  fetch(process.argv[1], { method: "POST", body, headers: {
    "Content-Type": "application/vnd.eventstore.events+json",
    Authorization: "Basic " + Buffer.from("admin:changeit").toString("base64") } })
    .then((r) => process.exit(r.status === 201 ? 0 : 1), () => process.exit(1))
' "http://127.0.0.1:$port/streams/check-pack" || { cat "$work/node.log" >&2; fail "a 200 KiB append (parsed off-thread) was not written"; }
step "a 200 KiB append was written (the off-thread parser loads)"
kill -TERM "$node_pid"
i=0
while kill -0 "$node_pid" 2>/dev/null; do
  i=$((i + 1))
  [ "$i" -le 100 ] || fail "the node did not stop within 10 s of SIGTERM"
  sleep 0.1
done
grep -q '"Stopped"' "$work/node.log" || { cat "$work/node.log" >&2; fail "the log does not say the node stopped"; }
[ -f "$work/data/writer.chk" ] || fail "no data written to the --db directory"
[ ! -e "$work/data/vellum.lock" ] || fail "the lock file was left behind"
node_pid=""
step "the node stopped on SIGTERM and left its data directory unlocked"
step "OK"

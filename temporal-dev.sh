#!/usr/bin/env bash
# Runs a local Temporal dev server for this project: finds (or builds) the Temporal CLI,
# registers the search attributes the bridge needs, and persists to SQLite.
set -euo pipefail

CLI_VERSION="v1.5.1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PORT="${TEMPORAL_PORT:-7233}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
STATE_DIR="${TEMPORAL_STATE_DIR:-$ROOT/.temporal}"
DB_FILE="${TEMPORAL_DB_FILE:-$STATE_DIR/dev-$PORT.db}"
CACHE_DIR="${TEMPORAL_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/temporal-mcp}"
PID_FILE="$STATE_DIR/dev-$PORT.pid"
LOG_FILE="$STATE_DIR/dev-$PORT.log"
START_TIMEOUT="${TEMPORAL_START_TIMEOUT:-90}"
# How the help names this script: `temporal-mcp-tasks dev-server` runs it from the installed package.
COMMAND="${TEMPORAL_DEV_COMMAND:-./temporal-dev.sh}"
# Search attributes the bridge reads and writes: keep in step with src/contract/task-contract.ts.
SEARCH_ATTRIBUTES=("McpPrincipal=Keyword" "McpAwaiting=KeywordList" "McpChangedAt=Datetime")

say() { printf '[temporal-dev] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

usage() {
  cat <<EOF
Usage: $COMMAND [run|start|stop|status|cli-path] [--help]

  run (default)  run the Temporal dev server in the foreground (Ctrl-C stops it)
  start          start it in the background; returns once it accepts connections
  stop           stop the background server of the configured port
  status         say whether a server answers on the configured port (exit 0 if so)
  cli-path       print the path of the Temporal CLI, building it first if needed

The CLI is, in this order: \$TEMPORAL_CLI; 'temporal' on PATH; a copy built before in
$CACHE_DIR/bin; a fresh 'go install github.com/temporalio/cli/cmd/temporal@$CLI_VERSION'
into that cache (a few minutes, once); the official download, where the internet is reachable.

Environment:
  TEMPORAL_PORT          gRPC port (default 7233); the Web UI listens on port+1000
  TEMPORAL_STATE_DIR     folder of the SQLite file, log and pid file (default $STATE_DIR)
  TEMPORAL_DB_FILE       SQLite file the server persists to (default <state dir>/dev-<port>.db)
  TEMPORAL_NAMESPACE     namespace to create besides 'default' (default: default)
  TEMPORAL_HEADLESS      set to 1 to run without the Web UI
  MCP_PAYLOAD_KEYS       the bridge's payload keys file: when set, the Web UI decodes payloads through the codec
                         server at TEMPORAL_UI_CODEC_ENDPOINT (default http://127.0.0.1:8888; run it with
                         temporal-mcp-tasks codec-server --http 127.0.0.1:8888)
  TEMPORAL_UI_CODEC_ENDPOINT
                         the Web UI's codec server (--ui-codec-endpoint), with or without MCP_PAYLOAD_KEYS
  TEMPORAL_METRICS_PORT  serve Prometheus metrics on http://127.0.0.1:<port>/metrics (default: a random port)
  TEMPORAL_HISTORY_LONG_POLL
                         how long the server holds an idle history long poll (history.longPollExpirationInterval,
                         default here 30s, Temporal's own 20s; it answers after 29s at most, its frontend's calls to
                         the history service ending at 30s): each task the bridge watches costs one request per
                         that interval
  TEMPORAL_NAMESPACE_LONG_POLLS
                         long polls of one namespace the server holds at once (frontend.namespaceCount, default
                         here 20000, Temporal's own 1200): workers' task-queue polls, and one history long poll per
                         task a bridge watches or waits on; past it Temporal refuses them
  TEMPORAL_CLI           path of a Temporal CLI to use
  TEMPORAL_MCP_CACHE     where a built CLI is kept (default ~/.cache/temporal-mcp)
EOF
}

find_cli() {
  if [[ -n "${TEMPORAL_CLI:-}" ]]; then
    [[ -x "$TEMPORAL_CLI" ]] || die "TEMPORAL_CLI=$TEMPORAL_CLI is not an executable file"
    echo "$TEMPORAL_CLI"; return
  fi
  if command -v temporal >/dev/null 2>&1; then command -v temporal; return; fi
  local cached="$CACHE_DIR/bin/temporal"
  if [[ -x "$cached" ]]; then echo "$cached"; return; fi
  mkdir -p "$CACHE_DIR/bin"
  # One build at a time: a second caller waits for the first one's binary.
  exec 9>"$CACHE_DIR/build.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if [[ -x "$cached" ]]; then echo "$cached"; return; fi
  if command -v go >/dev/null 2>&1; then
    say "no Temporal CLI found; building temporalio/cli $CLI_VERSION with 'go install' into $CACHE_DIR/bin"
    say "this takes a few minutes the first time (Go $(go env GOVERSION)); later runs reuse the binary"
    if GOBIN="$CACHE_DIR/bin" GOFLAGS="${GOFLAGS:-} -mod=mod" go install "github.com/temporalio/cli/cmd/temporal@$CLI_VERSION" >&2; then
      say "built $cached"
      echo "$cached"; return
    fi
    say "go install failed (output above)"
  else
    say "Go is not installed, so the CLI cannot be built here"
  fi
  download_cli "$cached" && { echo "$cached"; return; }
  die "no Temporal CLI: put 'temporal' on PATH, set TEMPORAL_CLI, or install Go 1.25+ so this script can build it"
}

download_cli() {
  local dest="$1" os arch tmp
  command -v curl >/dev/null 2>&1 || return 1
  os="$(uname -s | tr '[:upper:]' '[:lower:]')"
  case "$(uname -m)" in x86_64|amd64) arch=amd64 ;; aarch64|arm64) arch=arm64 ;; *) return 1 ;; esac
  say "trying the official Temporal CLI download for $os/$arch"
  tmp="$(mktemp -d)"
  if curl -fsSL --max-time 120 "https://temporal.download/cli/archive/latest?platform=$os&arch=$arch" -o "$tmp/cli.tgz" \
    && tar -xzf "$tmp/cli.tgz" -C "$tmp" temporal; then
    mv "$tmp/temporal" "$dest"; rm -rf "$tmp"; say "downloaded $dest"; return 0
  fi
  rm -rf "$tmp"; say "download failed"; return 1
}

server_args() {
  local args=(server start-dev --ip 127.0.0.1 --port "$PORT" --db-filename "$DB_FILE" --log-level "${TEMPORAL_LOG_LEVEL:-warn}")
  if [[ "$NAMESPACE" != "default" ]]; then args+=(--namespace "$NAMESPACE"); fi
  if [[ -n "${TEMPORAL_METRICS_PORT:-}" ]]; then args+=(--metrics-port "$TEMPORAL_METRICS_PORT"); fi
  args+=(--dynamic-config-value "history.longPollExpirationInterval=\"${TEMPORAL_HISTORY_LONG_POLL:-30s}\"")
  args+=(--dynamic-config-value "frontend.namespaceCount=${TEMPORAL_NAMESPACE_LONG_POLLS:-20000}")
  if [[ "${TEMPORAL_HEADLESS:-0}" == "1" ]]; then
    args+=(--headless)
  else
    args+=(--ui-port "$((PORT + 1000))")
    # Payloads the bridge encrypts are shown decoded by the codec server to the people it authorizes.
    local codec; codec="$(codec_endpoint)"
    if [[ -n "$codec" ]]; then args+=(--ui-codec-endpoint "$codec"); fi
  fi
  local sa
  for sa in "${SEARCH_ATTRIBUTES[@]}"; do args+=(--search-attribute "$sa"); done
  printf '%s\n' "${args[@]}"
}

# The Web UI's codec endpoint: TEMPORAL_UI_CODEC_ENDPOINT, else the codec server's default address when payloads are
# encrypted (MCP_PAYLOAD_KEYS), else none.
codec_endpoint() {
  if [[ -n "${TEMPORAL_UI_CODEC_ENDPOINT:-}" ]]; then echo "$TEMPORAL_UI_CODEC_ENDPOINT"
  elif [[ -n "${MCP_PAYLOAD_KEYS:-}" ]]; then echo "http://127.0.0.1:8888"
  fi
}

healthy() {
  "$1" operator cluster health --address "127.0.0.1:$PORT" >/dev/null 2>&1
}

running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid state; pid="$(cat "$PID_FILE")"
  kill -0 "$pid" 2>/dev/null || return 1
  # A killed server nobody has reaped yet is a zombie: not running.
  state="$(ps -o stat= -p "$pid" 2>/dev/null || true)"
  [[ "$state" != Z* ]] || return 1
  echo "$pid"
}

# A server that was already running may predate the bridge: make sure its search attributes exist.
ensure_search_attributes() {
  local cli="$1" sa name type
  for sa in "${SEARCH_ATTRIBUTES[@]}"; do
    name="${sa%%=*}"; type="${sa#*=}"
    if ! "$cli" operator search-attribute list --address "127.0.0.1:$PORT" --namespace "$NAMESPACE" 2>/dev/null | grep -qw "$name"; then
      say "registering search attribute $name ($type) in namespace $NAMESPACE"
      "$cli" operator search-attribute create --address "127.0.0.1:$PORT" --namespace "$NAMESPACE" --name "$name" --type "$type" >&2
    fi
  done
}

cmd_run() {
  local cli; cli="$(find_cli)"
  mkdir -p "$STATE_DIR" "$(dirname "$DB_FILE")"
  mapfile -t args < <(server_args)
  say "Temporal dev server on 127.0.0.1:$PORT, persisting to $DB_FILE (Ctrl-C to stop)"
  exec "$cli" "${args[@]}"
}

cmd_start() {
  local cli pid waited=0; cli="$(find_cli)"
  if pid="$(running_pid)"; then
    say "already running on 127.0.0.1:$PORT (pid $pid)"; ensure_search_attributes "$cli"; return 0
  fi
  if healthy "$cli"; then
    say "a Temporal server not started by this script already answers on 127.0.0.1:$PORT; using it"
    ensure_search_attributes "$cli"; return 0
  fi
  mkdir -p "$STATE_DIR" "$(dirname "$DB_FILE")"
  mapfile -t args < <(server_args)
  say "starting the Temporal dev server on 127.0.0.1:$PORT (db $DB_FILE, log $LOG_FILE)"
  nohup "$cli" "${args[@]}" >"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"
  until healthy "$cli"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"; tail -n 20 "$LOG_FILE" >&2 || true
      die "the dev server exited during start-up (log above; is port $PORT or $((PORT + 1000)) taken?)"
    fi
    if (( waited >= START_TIMEOUT * 4 )); then
      kill "$pid" 2>/dev/null || true; rm -f "$PID_FILE"
      die "the dev server did not accept connections within ${START_TIMEOUT}s (log: $LOG_FILE)"
    fi
    sleep 0.25; waited=$((waited + 1))
  done
  say "ready on 127.0.0.1:$PORT (pid $pid)$([[ "${TEMPORAL_HEADLESS:-0}" == "1" ]] || echo ", Web UI http://127.0.0.1:$((PORT + 1000))")"
  local codec; codec="$(codec_endpoint)"
  if [[ "${TEMPORAL_HEADLESS:-0}" != "1" && -n "$codec" ]]; then
    say "the Web UI decodes payloads through the codec server $codec (temporal-mcp-tasks codec-server --http ${codec#http://})"
  fi
}

cmd_stop() {
  local pid i
  if ! pid="$(running_pid)"; then rm -f "$PID_FILE"; say "no dev server started by this script on port $PORT"; return 0; fi
  say "stopping the dev server on port $PORT (pid $pid)"
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  if kill -0 "$pid" 2>/dev/null; then say "still running after 15s; killing it"; kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$PID_FILE"
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then say "running on 127.0.0.1:$PORT (pid $pid, db $DB_FILE)"; return 0; fi
  if command -v temporal >/dev/null 2>&1 || [[ -x "$CACHE_DIR/bin/temporal" ]]; then
    if healthy "$(find_cli)"; then say "a server not started by this script answers on 127.0.0.1:$PORT"; return 0; fi
  fi
  say "not running on port $PORT"; return 3
}

case "${1:-run}" in
  run) cmd_run ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  cli-path) find_cli ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac

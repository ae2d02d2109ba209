#!/usr/bin/env bash
# Builds the three images of docker/Dockerfile and runs them, without a Docker daemon: Debian bookworm's
# buildah and podman as root (vfs storage, chroot isolation for the builds, runc for the containers, host
# networking), against an embedded PostgreSQL on loopback (packages/db/src/embedded-postgres.ts).
#
#   bash scripts/container-smoke.sh                 # builds what is committed (git archive HEAD)
#   SMOKE_CONTEXT=worktree bash scripts/container-smoke.sh   # builds the working tree (.dockerignore applies)
#
# NOT run by CI: it installs packages and takes 10-15 minutes, and vfs stores every layer as a full copy, so
# /var/lib/containers grows by up to ~30 GB (`buildah rm --all && podman image prune -f` afterwards leaves the
# four tagged images, ~5 GB). Safe to run again: the stand-in base image is made once; containers, the
# database and the PostgreSQL it starts are removed on exit. It checks: the three builds (each imports its entry module's graph at build time), the
# image sizes, that the processes run as uid 1000, migrations (twice: idempotent), the receiver's /healthz and
# /readyz, a signed Stripe event (accepted, then a duplicate), the worker processing it (the welcome .eml in
# MAIL_DIR), and that SIGTERM stops the receiver and the worker with exit code 0.
#
# No registry but npm and Debian is reachable here, so `node:22-bookworm-slim` cannot be pulled: the script
# makes a stand-in with the same shape (debootstrap --variant=minbase bookworm, this machine's Node 22 binary
# in /usr/local/bin, npm 10 from the npm registry, a `node` user with uid/gid 1000) and builds with
# --build-arg NODE_IMAGE=<stand-in>. Where this machine reaches the registry through a TLS-intercepting proxy
# (NODE_EXTRA_CA_CERTS set), the stand-in trusts the same CA bundle; the real base image needs nothing of it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

work=${SMOKE_WORK:-/var/tmp/webhook-inbox-container-smoke}
base=localhost/webhook-inbox-node-standin:22-bookworm-slim
prefix=localhost/webhook-inbox
export STORAGE_DRIVER=vfs
log() { printf '\n==> %s\n' "$*"; }
fail() {
  printf 'FAILED: %s\n' "$*" >&2
  exit 1
}

[[ "$(id -u)" == 0 ]] || fail "run as root (rootful podman/buildah)"
command -v node >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] === 22 ? 0 : 1)' ||
  fail "needs Node 22 on PATH (its binary goes into the stand-in base image)"
mkdir -p "$work"

# ---- tools ------------------------------------------------------------------------------------------------
need=()
for tool in buildah podman debootstrap runc; do command -v "$tool" >/dev/null || need+=("$tool"); done
if ((${#need[@]})); then
  log "installing ${need[*]} (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends buildah podman debootstrap runc >/dev/null
fi
# This sandbox: no CAP_SYS_RESOURCE, so the runtime may only keep or lower the rlimits (podman's defaults raise
# them), and crun refuses the hybrid cgroup v1/v2 mounts where runc copes.
ulimits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=20000:20000")
podman=(podman --runtime "$(command -v runc)")
# Host networking throughout: the containers reach PostgreSQL on loopback, and no CNI/netavark is needed.
run_once=("${podman[@]}" run --rm "${ulimits[@]}" --network host)

# ---- the stand-in for node:22-bookworm-slim ------------------------------------------------------------
if ! podman image exists "$base"; then
  log "making the stand-in base image $base"
  rootfs="$work/rootfs"
  if [[ ! -x "$rootfs/usr/bin/apt-get" ]]; then
    rm -rf "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log"
  fi
  install -m 0755 "$(node -p 'process.execPath')" "$rootfs/usr/local/bin/node"
  strip "$rootfs/usr/local/bin/node" 2>/dev/null || true
  if [[ ! -f "$work/npm.tgz" ]]; then
    (cd "$work" && npm pack --silent npm@10 >npm-pack.txt && mv "$(tail -n1 npm-pack.txt)" npm.tgz)
  fi
  rm -rf "$rootfs/usr/local/lib/node_modules/npm"
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/npm.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" sh -c 'id node >/dev/null 2>&1 ||
    { groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node; }'
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]')
  if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -f "$NODE_EXTRA_CA_CERTS" ]]; then
    mkdir -p "$rootfs/etc/ssl/certs"
    cp "$NODE_EXTRA_CA_CERTS" "$rootfs/etc/ssl/certs/extra-ca-certificates.crt"
    changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/extra-ca-certificates.crt')
  fi
  tar -C "$rootfs" -c . | podman import --quiet "${changes[@]}" - "$base" >/dev/null
  "${run_once[@]}" "$base" sh -c 'echo "stand-in: node $(node --version), npm $(npm --version), $(id node)"'
fi

# ---- build ------------------------------------------------------------------------------------------------
context="$work/context"
if [[ "${SMOKE_CONTEXT:-head}" == worktree ]]; then
  context=$root
  log "building from the working tree"
else
  rm -rf "$context" && mkdir -p "$context"
  git archive HEAD | tar -x -C "$context"
  log "building from HEAD ($(git rev-parse --short HEAD))"
fi
for target in migrate receiver worker; do
  start=$(date +%s)
  # --format docker keeps HEALTHCHECK (the OCI image format has no field for it); --layers reuses the shared
  # build stages between the targets.
  buildah bud --quiet --layers --format docker --isolation chroot --network host "${ulimits[@]}" \
    --build-arg NODE_IMAGE="$base" -f "$context/docker/Dockerfile" --target "$target" -t "$prefix-$target" \
    "$context" >"$work/build-$target.log" 2>&1 || {
    tail -n 30 "$work/build-$target.log" >&2
    fail "building $target (log: $work/build-$target.log)"
  }
  echo "built $prefix-$target in $(($(date +%s) - start)) s"
done

log "images"
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^($base|$prefix-(migrate|receiver|worker):latest) " | sort
for target in migrate receiver worker; do
  user=$(podman image inspect --format '{{.Config.User}}' "$prefix-$target")
  uid=$("${run_once[@]}" --entrypoint id "$prefix-$target" -u 2>>"$work/podman.log")
  echo "$target: USER $user, id -u -> $uid"
  [[ "$uid" == 1000 ]] || fail "$target runs as uid $uid"
done
for target in receiver worker; do
  podman image inspect --format "$target: HEALTHCHECK {{json .Config.Healthcheck.Test}}, STOPSIGNAL {{.Config.StopSignal}}" "$prefix-$target"
done

# ---- run against PostgreSQL on loopback -------------------------------------------------------------------
pg_pid=
containers=(webhook-inbox-smoke-receiver webhook-inbox-smoke-worker)
cleanup() {
  for name in "${containers[@]}"; do "${podman[@]}" rm -f -t 0 "$name" >/dev/null 2>&1 || true; done
  if [[ -n "$pg_pid" ]]; then
    kill -TERM "$pg_pid" 2>/dev/null || true
    wait "$pg_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
cleanup

log "starting an embedded PostgreSQL on loopback"
rm -f "$work/pg-url"
node --input-type=module -e "
  import { writeFileSync } from 'node:fs';
  import { findFreePort, startEmbeddedPostgres } from '@webhook-inbox/db/embedded';
  const server = await startEmbeddedPostgres({ dataDir: '$work/postgres', port: await findFreePort(), persistent: false, unsafeFast: true });
  const client = new (await import('pg')).default.Client(server.url());
  await client.connect();
  await client.query('drop database if exists webhook_inbox_smoke');
  await client.query('create database webhook_inbox_smoke');
  await client.end();
  writeFileSync('$work/pg-url', server.url('webhook_inbox_smoke'));
  let stopping = false;
  process.on('SIGTERM', async () => { if (!stopping) { stopping = true; await server.stop(); process.exit(0); } });
  setInterval(() => {}, 1 << 30);
" &
pg_pid=$!
for _ in $(seq 1 120); do [[ -s "$work/pg-url" ]] && break; sleep 0.5; done
[[ -s "$work/pg-url" ]] || fail "the embedded PostgreSQL did not start"
database_url=$(cat "$work/pg-url")
echo "DATABASE_URL=${database_url/:postgres@/:***@}"

free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
receiver_port=$(free_port)
worker_port=$(free_port)
stripe_secret="whsec_$(node -p 'require("crypto").randomBytes(24).toString("base64")')"
shopify_secret=$(node -p 'require("crypto").randomBytes(32).toString("hex")')
run=("${podman[@]}" run "${ulimits[@]}" --network host -e DATABASE_URL="$database_url")

log "migrate (twice: the second run finds the schema current)"
for attempt in 1 2; do
  "${run[@]}" --rm "$prefix-migrate" >"$work/migrate-$attempt.log" 2>&1 || {
    cat "$work/migrate-$attempt.log" >&2
    fail "migrate run $attempt"
  }
  echo "migrate run $attempt: exit 0"
done

log "receiver on 127.0.0.1:$receiver_port, worker on 127.0.0.1:$worker_port"
"${run[@]}" -d --name webhook-inbox-smoke-receiver -e PORT="$receiver_port" \
  -e STRIPE_WEBHOOK_SECRET="$stripe_secret" -e SHOPIFY_WEBHOOK_SECRET="$shopify_secret" "$prefix-receiver" >/dev/null 2>>"$work/podman.log"
"${run[@]}" -d --name webhook-inbox-smoke-worker -e WORKER_PORT="$worker_port" -e WORKER_POLL_SECONDS=1 \
  "$prefix-worker" >/dev/null 2>>"$work/podman.log"
wait_ok() {
  for _ in $(seq 1 120); do
    [[ "$(node -e "fetch('$1').then((r) => console.log(r.status), () => console.log(0))")" == 200 ]] && return 0
    sleep 0.5
  done
  return 1
}
wait_ok "http://127.0.0.1:$receiver_port/healthz" || {
  "${podman[@]}" logs webhook-inbox-smoke-receiver >&2
  fail "receiver /healthz"
}
wait_ok "http://127.0.0.1:$worker_port/healthz" || {
  "${podman[@]}" logs webhook-inbox-smoke-worker >&2
  fail "worker /healthz"
}
for url in "http://127.0.0.1:$receiver_port/healthz" "http://127.0.0.1:$receiver_port/readyz" "http://127.0.0.1:$worker_port/healthz"; do
  node -e "fetch('$url').then(async (r) => console.log('GET $url ->', r.status, await r.text()))"
done
for name in "${containers[@]}"; do
  echo "$name: $("${podman[@]}" exec "$name" sh -c 'echo "PID 1 $(cat /proc/1/comm), uid $(id -u)"')"
  # The image's HEALTHCHECK command, run once inside the container (no systemd here for podman's timers).
  "${podman[@]}" healthcheck run "$name" 2>>"$work/podman.log" || fail "$name: the image's HEALTHCHECK failed"
  echo "$name: HEALTHCHECK -> healthy"
done

log "a signed Stripe event (pnpm inbox send stripe), delivered twice"
email="smoke-$(date +%s)@example.com"
sent=$(STRIPE_WEBHOOK_SECRET=$stripe_secret DATABASE_URL=$database_url node packages/cli/src/main.ts send stripe \
  checkout.session.completed --email "$email" --times 2 --url "http://127.0.0.1:$receiver_port" --json)
echo "$sent"
event_id=$(node -e 'const r = JSON.parse(process.argv[1]); console.log(r.eventId)' "$sent")
node -e '
  const r = JSON.parse(process.argv[1]);
  const [first, second] = r.deliveries;
  if (first.status !== 200 || first.body.status !== "accepted" || second.status !== 200 || second.body.status !== "duplicate")
    { console.error("unexpected deliveries"); process.exit(1); }
' "$sent" || fail "the receiver's answers"

log "the worker processes it"
status=
for _ in $(seq 1 60); do
  status=$(DATABASE_URL=$database_url node packages/cli/src/main.ts show stripe "$event_id" --json |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).status))')
  [[ "$status" == processed ]] && break
  sleep 1
done
echo "event $event_id: $status"
[[ "$status" == processed ]] || {
  "${podman[@]}" logs webhook-inbox-smoke-worker >&2
  fail "the event was not processed"
}
"${podman[@]}" exec webhook-inbox-smoke-worker sh -c "grep -l '$email' /var/lib/webhook-inbox/mail/*.eml" |
  sed 's/^/welcome email: /' || fail "no .eml for $email in the worker's MAIL_DIR"

log "SIGTERM (podman stop: the image's STOPSIGNAL, node as PID 1)"
for name in "${containers[@]}"; do
  start=$(date +%s%N)
  "${podman[@]}" stop -t 60 "$name" >/dev/null 2>>"$work/podman.log"
  code=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name")
  echo "$name: exit $code after $((($(date +%s%N) - start) / 1000000)) ms; last log line: $("${podman[@]}" logs "$name" 2>&1 | tail -n 1)"
  [[ "$code" == 0 ]] || fail "$name exited $code on SIGTERM"
done

log "container smoke test passed"

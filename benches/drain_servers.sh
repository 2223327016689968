#!/usr/bin/env bash
# Draining a backlog of N queued checkpoint refs (issue 50): `git entire-checkpoint push` to a
# plain ssh server (OpenSSH run as this user, key authentication) and to smart HTTP (`git
# http-backend` behind a small Python server), both on 127.0.0.1, each into an empty bare
# repository; wall time, the `git push` batches it took (the server's pre-receive hook counts
# them), and a check that the server holds every ref at our tip. docs/scaling.md quotes a run.
# Usage: benches/drain_servers.sh [--smoke] [N]   (default 2000; --smoke: 50 refs, debug
# binaries: checks that it runs).
set -euo pipefail
if [ "${1:-}" = --smoke ]; then
    set -- 50
    export BENCH_PROFILE=debug
fi
N="${1:-2000}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" python3
[ -x /usr/sbin/sshd ] || { apt-get update -qq && apt-get install -y -qq openssh-server >/dev/null; }
now() { date +%s.%N; }
took() { python3 -c "print(f'{$2 - $1:.1f} s')"; }

# N checkpoints, one real write and N-1 copies of its tree under their own IDs (what a write
# makes, without N processes): every ref is a commit whose root metadata.json names its ID.
R="$WORK/ours"
git init -q -b main "$R"
git -C "$R" commit -q --allow-empty -m init
first="$(env -C "$R" git-entire-checkpoint write -q --session s --transcript "$T" --prompt p)"
tree="$(git -C "$R" rev-parse "$(ref_of "$first")^{tree}")"
git -C "$R" cat-file blob "$(ref_of "$first"):metadata.json" >"$WORK/meta.json"
python3 - "$N" "$first" "$tree" "$WORK/meta.json" <<'PY' | git -C "$R" fast-import --quiet
import sys
n, first, tree, meta = int(sys.argv[1]), sys.argv[2], sys.argv[3], open(sys.argv[4]).read()
out = sys.stdout
for i in range(1, n):
    cid = f"{i:012x}"
    doc = meta.replace(first, cid)
    msg = f"Checkpoint: {cid}\n"
    out.write(f"commit refs/entire/checkpoints/{cid[-2:]}/{cid}\n"
              f"committer Bench <bench@example.invalid> 1767225600 +0000\n"
              f"data {len(msg)}\n{msg}from 0000000000000000000000000000000000000000\n"
              f"M 040000 {tree} \nM 100644 inline metadata.json\ndata {len(doc)}\n{doc}\n")
PY
[ "$(git -C "$R" for-each-ref refs/entire/checkpoints/ | wc -l)" -eq "$N" ]

# An empty bare repository whose pre-receive hook counts the pushes it gets.
bare() {
    git init -q --bare "$1"
    git -C "$1" config http.receivepack true
    printf '#!/bin/sh\necho >>"%s"\n' "$1/pushes" >"$1/hooks/pre-receive"
    chmod +x "$1/hooks/pre-receive"
}

# Pushes everything the remote lacks to $1 (a URL) and checks that the bare repository $2 holds
# every ref at our tip.
drain() {
    local url="$1" repo="$2" name="$3"
    git -C "$R" remote remove origin 2>/dev/null || true
    git -C "$R" remote add origin "$url"
    start=$(now)
    env -C "$R" git-entire-checkpoint push --all -q
    end=$(now)
    diff <(git -C "$R" for-each-ref refs/entire/checkpoints/) \
        <(git -C "$repo" for-each-ref refs/entire/checkpoints/) >/dev/null ||
        { echo "$name: the server does not hold every ref at our tip" >&2; exit 1; }
    echo "drain $N refs over $name: $(took "$start" "$end"), $(wc -l <"$repo/pushes") git push(es)"
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ssh: sshd run by this user on a free port, key authentication only.
S="$WORK/sshd"
mkdir -p "$S"
ssh-keygen -q -t ed25519 -N "" -f "$S/host_key"
ssh-keygen -q -t ed25519 -N "" -f "$S/client_key"
cp "$S/client_key.pub" "$S/authorized_keys"
[ "$(id -u)" != 0 ] || mkdir -p /run/sshd
port=$(free_port)
cat >"$S/sshd_config" <<CONF
ListenAddress 127.0.0.1:$port
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AcceptEnv GIT_PROTOCOL
LogLevel ERROR
CONF
/usr/sbin/sshd -D -e -f "$S/sshd_config" 2>/dev/null &
sshd_pid=$!
http_pid=
trap 'kill $sshd_pid ${http_pid:-} 2>/dev/null; rm -rf "$WORK"' EXIT
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null; do sleep 0.1; done
export GIT_SSH_COMMAND="ssh -i $S/client_key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
bare "$WORK/ssh.git"
drain "ssh://$(id -un)@127.0.0.1:$port$WORK/ssh.git" "$WORK/ssh.git" ssh

# Smart HTTP: git http-backend run per request as CGI by a small Python server.
mkdir -p "$WORK/served"
bare "$WORK/served/http.git"
hport=$(free_port)
python3 - "$hport" "$WORK/served" <<'PY' &
import http.server, os, subprocess, sys
port, root = int(sys.argv[1]), sys.argv[2]
class Cgi(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, *args): pass
    def run(self):
        length = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                chunk = self.rfile.read(size + 2)
                if size == 0: break
                body += chunk[:-2]
        else:
            body = self.rfile.read(length)
        path, _, query = self.path.partition("?")
        env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1",
                   REQUEST_METHOD=self.command, PATH_INFO=path, QUERY_STRING=query,
                   REMOTE_ADDR="127.0.0.1", CONTENT_LENGTH=str(len(body)),
                   CONTENT_TYPE=self.headers.get("Content-Type", ""))
        for header, var in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
            if self.headers.get(header): env[var] = self.headers[header]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status = 200
        lines = head.split(b"\r\n")
        for l in lines:
            if l.lower().startswith(b"status:"): status = int(l.split()[1])
        self.send_response(status)
        for l in lines:
            k, _, v = l.decode().partition(":")
            if k.lower() != "status": self.send_header(k, v.strip())
        self.end_headers()
        self.wfile.write(rest)
    do_GET = do_POST = run
http.server.ThreadingHTTPServer(("127.0.0.1", port), Cgi).serve_forever()
PY
http_pid=$!
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $hport))" 2>/dev/null; do sleep 0.1; done
drain "http://127.0.0.1:$hport/http.git" "$WORK/served/http.git" http

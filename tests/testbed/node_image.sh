#!/bin/sh
# Builds the test bed's node image (default fleetplan-node:latest) unless it
# exists with the same contents; prints the image's name.
#
#   node_image.sh [IMAGE]
#
# No registry is reachable, so the image is `docker import` of a rootfs
# tarball made here: only /etc, /root/.ssh, /run/sshd, /tmp, an entrypoint,
# and empty mount points. Containers run with the host's /usr, /lib, /lib64,
# /bin and /sbin bind-mounted read-only (cluster.sh, the docker transport),
# so sshd, sh, the project's binaries and LibTorch come from the host, and
# so do the stack tools a hung job's agents run (gdb with python3.11-dbg's
# py-bt, elfutils' eu-stack: tools/install-deps.sh).
#
# The entrypoint generates the node's host key (Ed25519), writes
# $FLEETPLAN_AUTHORIZED_KEYS to /root/.ssh/authorized_keys and runs
# `/usr/sbin/sshd -D -e`.
#
# Needs a daemon (dockerd.sh ensure) at $DOCKER_HOST.
set -eu
PATH="$PATH:/usr/sbin:/sbin:/usr/local/bin"

image="${1:-fleetplan-node:latest}"
here="$(cd "$(dirname "$0")" && pwd)"
state="${FLEETPLAN_DOCKERD_DIR:-/var/tmp/fleetplan-dockerd}"
mkdir -p "$state"

# Rebuild when this script changes: its digest is the image's label.
version="$(sha256sum "$here/node_image.sh" | cut -c1-16)"

exec 8>"$state/node_image.lock"
flock 8
have="$(docker image inspect --format '{{index .Config.Labels "fleetplan.node_image"}}' \
  "$image" 2>/dev/null || true)"
if [ "$have" = "$version" ]; then
  echo "$image"
  exit 0
fi

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
cd "$root"
mkdir -p etc/ssh root/.ssh run/sshd tmp var/tmp var/log var/empty \
  usr lib lib64 bin sbin proc sys dev home
# mktemp made the root 0700: a node's other users must reach /usr and /lib.
chmod 755 .
chmod 1777 tmp var/tmp
chmod 700 root root/.ssh
chmod 755 run/sshd

cat >etc/passwd <<'EOF'
root:x:0:0:root:/root:/bin/sh
sshd:x:102:65534::/run/sshd:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >etc/group <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
printf 'root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\n' >etc/shadow
chmod 640 etc/shadow
cat >etc/nsswitch.conf <<'EOF'
passwd: files
group: files
shadow: files
hosts: files dns
EOF
printf '127.0.0.1 localhost\n::1 localhost\n' >etc/hosts
cat >etc/ssh/sshd_config <<'EOF'
Port 22
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AuthorizedKeysFile .ssh/authorized_keys
AcceptEnv *
PrintMotd no
Subsystem sftp /usr/lib/openssh/sftp-server
HostKey /etc/ssh/ssh_host_ed25519_key
EOF
# The host's loader cache and alternatives: libraries outside the default
# search path (CUDA, LibTorch) and /usr/bin links through /etc/alternatives.
cp /etc/ld.so.cache etc/ 2>/dev/null || true
cp -a /etc/ld.so.conf /etc/ld.so.conf.d etc/ 2>/dev/null || true
cp -a /etc/alternatives etc/ 2>/dev/null || true

cat >entrypoint.sh <<'EOF'
#!/bin/sh
# A fresh host key per node (Ed25519 alone: RSA's would cost every start a
# second of CPU), then sshd in the foreground.
set -e
[ -f /etc/ssh/ssh_host_ed25519_key ] ||
  ssh-keygen -q -t ed25519 -N '' -f /etc/ssh/ssh_host_ed25519_key
if [ -n "${FLEETPLAN_AUTHORIZED_KEYS:-}" ]; then
  printf '%s\n' "$FLEETPLAN_AUTHORIZED_KEYS" >/root/.ssh/authorized_keys
  chmod 600 /root/.ssh/authorized_keys
fi
exec /usr/sbin/sshd -D -e
EOF
chmod 755 entrypoint.sh

tar --numeric-owner --owner=0 --group=0 -cf - . |
  docker import \
    --change 'CMD ["/bin/sh", "/entrypoint.sh"]' \
    --change "LABEL fleetplan.node_image=$version fleetplan.testbed=1" \
    - "$image" >/dev/null
echo "$image"

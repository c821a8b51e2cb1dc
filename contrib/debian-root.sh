#!/bin/bash
# A Debian root (chroot) for building and testing sched/easypp against the
# Slurm release of another Debian release than the host's: Debian 13
# (trixie) ships Slurm 24.11. Made from Debian's registry by debootstrap,
# cached between runs, rebuilt when missing or broken. Used by setup.sh.
#
#   contrib/debian-root.sh ensure PACKAGE...
#       create the root if needed and install the packages missing in it
#   contrib/debian-root.sh run [--bind DIR]... COMMAND [ARG...]
#       run COMMAND inside the root as root, with /proc, /sys, /dev and each
#       DIR mounted at its own path; everything mounted is unmounted and
#       every process left in the root (munged, say) is ended afterwards,
#       also on failure or interruption. Exit status: COMMAND's.
#
# Environment:
#   EASYPP_ROOT_DIR       the root (default /var/cache/easypp/<suite>)
#   EASYPP_ROOT_SUITE     Debian suite (default trixie)
#   EASYPP_DEBIAN_MIRROR  (default http://deb.debian.org/debian)
#   EASYPP_ROOT_ENV       names of variables passed into the root besides
#                         PATH, HOME, LANG, TERM, CI and EASYPP_*
# Needs root, debootstrap (made with --variant=minbase) and flock. One user
# of a root at a time: a second waits for the first (lock file next to it).
set -euo pipefail

prog=${0##*/}
die() { echo "$prog: error: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

suite=${EASYPP_ROOT_SUITE:-trixie}
root=${EASYPP_ROOT_DIR:-/var/cache/easypp/$suite}
mirror=${EASYPP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
stamp=.easypp-root   # written inside the root once debootstrap succeeded

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"
case $root in /?*) ;; *) die "EASYPP_ROOT_DIR must be an absolute path: '$root'" ;; esac
root=${root%/}

# --- mounts ---------------------------------------------------------------------

mounted_under() {  # mount points at or under $1, deepest first
  awk -v r="$1" '{ gsub(/\\040/, " ", $2) } $2 == r || index($2, r "/") == 1 { print $2 }' \
    /proc/self/mounts | sort -r
}

unmount_all() {  # $1: directory; unmount everything at or under it
  local m left
  for m in $(mounted_under "$1"); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  left=$(mounted_under "$1")
  [ -z "$left" ] || { note "still mounted: $left"; return 1; }
}

# Processes whose root directory is the root: started inside it by us.
procs_in_root() {
  local p r
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    [ "$r" = "$root" ] && echo "${p#/proc/}"
  done
}

end_processes() {
  local pids i
  pids=$(procs_in_root)
  [ -n "$pids" ] || return 0
  note "ending processes left in $root: $(echo $pids)"
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pids=$(procs_in_root)
    [ -n "$pids" ] || return 0
    sleep 0.5
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  sleep 0.5
}

mount_system() {  # /proc, /sys, /dev (with /dev/pts and /dev/shm)
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"
  mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
}

release() {  # end the processes, then unmount; never fails
  end_processes || true
  unmount_all "$root" || true
}

# --- the lock -----------------------------------------------------------------------

lock() {
  mkdir -p "$(dirname "$root")"
  exec 9>"$root.lock"
  if ! flock -n 9; then
    note "waiting for another user of $root"
    flock 9
  fi
}

# --- creation -------------------------------------------------------------------------

healthy() {
  [ -f "$root/$stamp" ] && [ -x "$root/usr/bin/apt-get" ] &&
    chroot "$root" /bin/true 2>/dev/null
}

create() {
  command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
  local tmp=$root.new t0=$SECONDS
  unmount_all "$root" || die "cannot unmount what is mounted under $root"
  unmount_all "$tmp" || die "cannot unmount what is mounted under $tmp"
  if [ -e "$root" ]; then note "$root is broken or incomplete: making it again"; fi
  rm -rf --one-file-system "$root" "$tmp"
  note "debootstrap --variant=minbase $suite $tmp $mirror"
  if ! debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$root.debootstrap.log" 2>&1; then
    tail -n 20 "$root.debootstrap.log" >&2
    unmount_all "$tmp" || true
    die "debootstrap failed (log: $root.debootstrap.log)"
  fi
  unmount_all "$tmp" || die "debootstrap left mounts under $tmp"
  # Package scripts must not start daemons (slurmctld, munge) in the root.
  printf '#!/bin/sh\n# easypp: never start services in this root\nexit 101\n' \
    >"$tmp/usr/sbin/policy-rc.d"
  chmod 755 "$tmp/usr/sbin/policy-rc.d"
  cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
  echo "$suite $mirror" >"$tmp/$stamp"
  mv "$tmp" "$root"
  note "created $root in $((SECONDS - t0)) s"
}

missing_in_root() {
  local p
  for p in "$@"; do
    chroot "$root" dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
      echo "$p"
  done
}

root_env() {  # env(1) arguments: a clean environment for commands in the root
  local v
  echo PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  echo HOME=/root
  echo LANG=C.UTF-8
  echo DEBIAN_FRONTEND=noninteractive
  for v in TERM CI ${EASYPP_ROOT_ENV:-} $(compgen -e | grep '^EASYPP_' || true); do
    [ -n "${!v+x}" ] && printf '%s=%s\n' "$v" "${!v}"
  done
}

in_root() {  # run "$@" in the root (mounts already there)
  local -a env_args
  mapfile -t env_args < <(root_env)
  chroot "$root" /usr/bin/env -i "${env_args[@]}" "$@" 9>&-
}

ensure() {
  local need t0
  lock
  release
  healthy || create
  need=$(missing_in_root "$@")
  [ -z "$need" ] && return 0
  t0=$SECONDS
  note "installing in $root:" $need
  trap 'release' EXIT
  trap 'exit 130' INT TERM
  mount_system
  # An install interrupted earlier is finished first; a root whose
  # installation fails is marked broken and made again next time.
  if ! in_root dpkg --configure -a >"$root.apt.log" 2>&1 ||
     ! in_root apt-get -q update >>"$root.apt.log" 2>&1 ||
     ! in_root apt-get install -y -q --no-install-recommends $need >>"$root.apt.log" 2>&1; then
    tail -n 20 "$root.apt.log" >&2
    rm -f "$root/$stamp"
    die "installing packages in $root failed (log: $root.apt.log); it will be made again"
  fi
  release
  trap - EXIT
  note "installed in $((SECONDS - t0)) s"
}

run() {
  local -a binds=()
  while [ $# -gt 0 ]; do
    case $1 in
      --bind) [ $# -ge 2 ] || die "--bind needs a directory"; binds+=("$2"); shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || die "run: no command"
  lock
  healthy || die "$root is missing or broken: run '$prog ensure PACKAGE...' first"
  release
  trap 'release' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP
  mount_system
  local d
  for d in "${binds[@]}"; do
    d=$(cd "$d" && pwd -P)
    mkdir -p "$root$d"
    mount --bind "$d" "$root$d"
  done
  # In the background, so that a signal is handled at once (bash runs traps
  # only between commands); release() ends it with everything in the root.
  local rc=0
  in_root "$@" &
  wait $! || rc=$?
  release
  trap - EXIT
  return $rc
}

[ $# -ge 1 ] || { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
cmd=$1; shift
case $cmd in
  ensure) ensure "$@" ;;
  run) run "$@" ;;
  path) echo "$root" ;;
  *) echo "usage: $prog ensure PACKAGE... | run [--bind DIR]... COMMAND..." >&2; exit 2 ;;
esac

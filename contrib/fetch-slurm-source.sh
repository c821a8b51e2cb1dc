#!/bin/bash
# Fetch and configure the Slurm source tree the sched/easypp plugin is built
# against: Debian's `slurm-wlm` source package of exactly the version of the
# installed libslurm-dev, unpacked with dpkg-source and configured once (only
# config.h and the generated headers are needed; Slurm itself is not built).
# When the registry serves that version's upstream tarball but not its .dsc
# (Debian 13's 24.11.5-4+deb13u1), the upstream tarball is used instead.
#
# Usage: contrib/fetch-slurm-source.sh [-f] [DESTDIR]
#   DESTDIR  default: <repository root>/.slurm-src/<upstream version>
#   -f       fetch again even if DESTDIR is already configured for the version
#
# The system's apt configuration is not modified: a private deb-src source
# list is derived from the machine's own apt entries (same URIs, suites,
# components and Signed-By; Types: deb-src) and used with private list and
# cache directories. Needs apt-get, dpkg-source (dpkg-dev), a C compiler and
# make. Exit status is non-zero on any failure.
set -euo pipefail

prog=${0##*/}
die() { echo "$prog: error: $*" >&2; exit 1; }
note() { echo "$prog: $*"; }

force=no
while getopts "fh" opt; do
  case $opt in
    f) force=yes ;;
    h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $prog [-f] [DESTDIR]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -le 1 ] || { echo "usage: $prog [-f] [DESTDIR]" >&2; exit 2; }

for tool in apt-get apt-config dpkg-query dpkg-source awk make; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "'$tool' not found (dpkg-source comes with dpkg-dev: apt-get install dpkg-dev)"
done
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 ||
  die "no C compiler found (Slurm's configure needs one: apt-get install gcc)"

# --- which version ---------------------------------------------------------
status=$(dpkg-query -W -f='${db:Status-Status}' libslurm-dev 2>/dev/null || true)
[ "$status" = installed ] ||
  die "libslurm-dev is not installed (apt-get install libslurm-dev); the plugin is built against the installed Slurm"
deb_version=$(dpkg-query -W -f='${Version}' libslurm-dev)
source_pkg=$(dpkg-query -W -f='${source:Package}' libslurm-dev)
[ -n "$source_pkg" ] || source_pkg=slurm-wlm
upstream=${deb_version#*:}      # drop an epoch
upstream=${upstream%-*}         # drop the Debian revision
[ -n "$upstream" ] || die "cannot derive the upstream version from '$deb_version'"

repo_root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$repo_root/.slurm-src/$upstream}
case $dest in /*) ;; *) dest=$PWD/$dest ;; esac
stamp=$dest/.easypp-source-stamp

configured_version() {  # SLURM_VERSION_STRING from the tree's config.h
  sed -n 's/^#define SLURM_VERSION_STRING "\(.*\)"/\1/p' "$1/config.h" 2>/dev/null || true
}

if [ $force = no ] && [ -f "$dest/config.h" ] && [ -f "$dest/src/slurmctld/slurmctld.h" ] &&
   [ "$(configured_version "$dest")" = "$upstream" ] &&
   [ "$(cat "$stamp" 2>/dev/null)" = "$source_pkg $deb_version" ]; then
  note "$dest is already configured for $source_pkg $deb_version; nothing to do (-f to fetch again)"
  exit 0
fi
if [ -e "$dest" ] && [ $force = no ]; then
  die "$dest exists but is not a configured $source_pkg $deb_version tree; remove it or use -f"
fi

parent=$(dirname "$dest")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.fetch-slurm.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# apt's download sandbox (user _apt) must be able to enter the directory.
chmod 755 "$work"
mkdir -p "$work/parts" "$work/lists/partial" "$work/cache/archives/partial" "$work/dl"
chmod 755 "$work/dl"

# --- a private deb-src list made from the machine's apt entries ------------
eval "$(apt-config shell SL Dir::Etc::SourceList/f SP Dir::Etc::SourceParts/d)"
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")

# One-line format (sources.list, *.list): "deb [opts] URI SUITE COMPONENT...".
# The filter keeps entries whose suite belongs to this release (codename,
# codename-updates, codename-security, codename/updates) when a codename is
# known; third-party repositories rarely publish sources.
oneline_to_src() {  # $1 = filter (codename or empty)
  awk -v want="$1" '
    function keep(suite) {
      if (want == "") return 1
      return suite == want || index(suite, want "-") == 1 || index(suite, want "/") == 1
    }
    /^[ \t]*deb[ \t]/ {
      line = $0
      sub(/^[ \t]*deb[ \t]+/, "", line)
      opts = ""
      if (substr(line, 1, 1) == "[") {
        end = index(line, "]")
        if (end == 0) next
        opts = substr(line, 1, end) " "
        line = substr(line, end + 1)
        sub(/^[ \t]+/, "", line)
      }
      n = split(line, f, /[ \t]+/)
      if (n < 2 || !keep(f[2])) next
      print "deb-src " opts line
    }'
}

# deb822 format (*.sources): copy every enabled stanza whose Types include
# "deb", with "Types: deb-src" (Signed-By, inline keys, options kept as is).
deb822_to_src() {  # $1 = filter (codename or empty)
  awk -v want="$1" '
    function flush(   i, t, s, n, ok, sf, k) {
      if (nl == 0) return
      t = " " types " "; ok = (index(t, " deb ") > 0) && tolower(enabled) != "no"
      if (ok && want != "") {
        n = split(suites, sf, /[ \t]+/); k = 0
        for (i = 1; i <= n; i++)
          if (sf[i] == want || index(sf[i], want "-") == 1 || index(sf[i], want "/") == 1) k = 1
        ok = k
      }
      if (ok) {
        for (i = 1; i <= nl; i++) print (i == typeline ? "Types: deb-src" : lines[i])
        print ""
      }
      nl = 0; types = ""; suites = ""; enabled = ""; typeline = 0
    }
    BEGIN { nl = 0 }
    /^[ \t]*$/ { flush(); next }
    /^#/ { next }
    {
      lines[++nl] = $0
      if (match($0, /^[A-Za-z-]+:/)) {
        key = tolower(substr($0, 1, RLENGTH - 1)); val = substr($0, RLENGTH + 1)
        gsub(/^[ \t]+|[ \t]+$/, "", val)
        if (key == "types") { types = val; typeline = nl }
        else if (key == "suites") suites = val
        else if (key == "enabled") enabled = val
      }
    }
    END { flush() }'
}

make_private_sources() {  # $1 = filter
  local f base
  : >"$work/parts/easypp-src.list"
  : >"$work/parts/easypp-src.sources"
  if [ -f "$SL" ]; then oneline_to_src "$1" <"$SL" >>"$work/parts/easypp-src.list"; fi
  for f in "$SP"*.list "$SP"*.sources; do
    [ -f "$f" ] || continue
    base=${f##*/}
    # apt itself ignores file names outside this pattern
    case $base in *[!A-Za-z0-9_.-]*) continue ;; esac
    case $f in
      *.list) oneline_to_src "$1" <"$f" >>"$work/parts/easypp-src.list" ;;
      *.sources) deb822_to_src "$1" <"$f" >>"$work/parts/easypp-src.sources" ;;
    esac
  done
  [ -s "$work/parts/easypp-src.list" ] || [ -s "$work/parts/easypp-src.sources" ]
}

if ! { [ -n "$codename" ] && make_private_sources "$codename"; }; then
  make_private_sources "" ||
    die "no usable 'deb' entries in $SL or $SP (nothing to derive deb-src entries from)"
fi

apt_opts=(
  -o "Dir::Etc::SourceList=/dev/null"
  -o "Dir::Etc::SourceParts=$work/parts"
  -o "Dir::State::Lists=$work/lists"
  -o "Dir::Cache=$work/cache"
  -o "Dir::Cache::pkgcache="
  -o "Dir::Cache::srcpkgcache="
  -o "APT::Get::List-Cleanup=false"
)

note "fetching $source_pkg $deb_version (for installed libslurm-dev) into $dest"
if ! apt-get -q "${apt_opts[@]}" update >"$work/apt-update.log" 2>&1; then
  # A repository without sources fails the update; the others may suffice.
  note "warning: 'apt-get update' on the private deb-src list reported errors:"
  grep -E '^(E|W):' "$work/apt-update.log" | head -5 | sed 's/^/  /' >&2 || true
fi
source_ok=yes
(cd "$work/dl" && apt-get -q "${apt_opts[@]}" source --download-only \
    "$source_pkg=$deb_version") >"$work/apt-source.log" 2>&1 || source_ok=no
dsc=$(ls "$work"/dl/*.dsc 2>/dev/null | head -n 1 || true)
# The upstream tarball of exactly this version (apt checked its hash against
# the Sources index before keeping it).
orig=$(ls "$work/dl/${source_pkg}_${upstream}".orig.tar.* 2>/dev/null | head -n 1 || true)
if [ $source_ok = yes ] && [ -n "$dsc" ]; then
  note "unpacking $(basename "$dsc")"
  if ! dpkg-source -x "$dsc" "$work/tree" >"$work/dpkg-source.log" 2>&1; then
    tail -n 20 "$work/dpkg-source.log" >&2
    die "dpkg-source -x failed"
  fi
elif [ -n "$orig" ]; then
  # Seen for trixie's slurm-wlm 24.11.5-4+deb13u1: the registry serves the
  # orig tarball but answers 404 for the .dsc and the debian tarball. The
  # plugin needs only the headers and config.h, which Debian's patches
  # (packaging, paths, backported fixes) leave alone; use the upstream tree.
  note "warning: the .dsc or debian tarball of $source_pkg $deb_version could not be downloaded;"
  note "warning: using the upstream tarball $(basename "$orig") without Debian's patches"
  mkdir "$work/tree"
  if ! tar -xf "$orig" -C "$work/tree" --strip-components=1 >"$work/tar.log" 2>&1; then
    tail -n 20 "$work/tar.log" >&2
    die "cannot unpack $(basename "$orig")"
  fi
  echo "$(basename "$orig") (upstream only: no .dsc was served)" >"$work/tree/.easypp-source-origin"
else
  echo "--- apt-get update (private deb-src list) ---" >&2
  tail -n 15 "$work/apt-update.log" >&2
  echo "--- apt-get source ---" >&2
  tail -n 15 "$work/apt-source.log" >&2
  die "could not download source package $source_pkg=$deb_version (neither its .dsc nor ${source_pkg}_${upstream}.orig.tar.*) from the machine's apt repositories"
fi

# Configure as Debian's main (non-emulator) build does, minus the options
# needing extra development packages (munge, pam, pmix): they select plugins
# and none of them changes slurmctld's data structures.
note "running Slurm's ./configure (log: $dest/easypp-configure.log)"
if ! (cd "$work/tree" && ./configure --prefix=/usr --sysconfdir=/etc/slurm \
        --without-rpath --disable-debug --enable-multiple-slurmd \
        SUCMD=/bin/su SLEEP_CMD=/bin/sleep) >"$work/tree/easypp-configure.log" 2>&1; then
  tail -n 25 "$work/tree/easypp-configure.log" >&2
  cp "$work/tree/easypp-configure.log" "$parent/easypp-configure-$upstream.failed.log" 2>/dev/null || true
  die "Slurm's ./configure failed (full log: $parent/easypp-configure-$upstream.failed.log)"
fi
[ -f "$work/tree/config.h" ] || die "configure produced no config.h"
got=$(configured_version "$work/tree")
[ "$got" = "$upstream" ] ||
  die "the configured source reports version '$got', expected $upstream"
echo "$source_pkg $deb_version" >"$work/tree/.easypp-source-stamp"

rm -rf "$dest"
mv "$work/tree" "$dest"
note "ready: $dest (Slurm $upstream, $source_pkg $deb_version)"

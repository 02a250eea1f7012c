#!/usr/bin/env bash
# `make test-py313`: run the whole of `make test` once more on CPython 3.13.
#
# The interpreter is built from Debian trixie's source package (the upstream tarball it ships),
# into a cache outside the work tree, so every clone on a machine reuses one build:
#   1. build dependencies from Debian's packages, where some are missing (needs root and apt-get);
#   2. the source through apt, with a private configuration (its own sources and lists, under the
#      cache) that adds trixie's deb-src: the machine's own apt configuration is not touched;
#   3. ./configure --prefix=CACHE/python3.13 --with-ensurepip=install && make -j2 && make install,
#      under a lock (--disable-test-modules too: CPython's own tests are not run, and installing
#      and byte-compiling them costs time);
#   4. `make test` with that interpreter, in .venv-py313 (.venv is left alone), mypy told 3.13,
#      and the compiled accelerators required to be in use.
# A machine that cannot build it says so and fails, unless KAFKAWIRE_SKIP_PY313=1 allows a skip.
#
# Environment: KAFKAWIRE_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/kafkawire); delete
# CACHE/python3.13 to build again (a new Debian revision of trixie's package, say).
set -euo pipefail
cd "$(dirname "$0")/.."

SOURCE=python3.13/trixie # trixie's version explicitly: other suites' may not be served
BUILD_DEPS=(build-essential pkg-config libssl-dev zlib1g-dev liblzma-dev libbz2-dev libffi-dev
  libsqlite3-dev libreadline-dev libncurses-dev uuid-dev libgdbm-dev)
# Standard modules that CPython builds only where their -dev packages are found (a build that
# lacks one is refused), and venv with pip for `make test`.
NEEDED_MODULES="ssl, zlib, lzma, bz2, ctypes, sqlite3, readline, venv, ensurepip"

cache=${KAFKAWIRE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafkawire}
prefix=$cache/python3.13
python=$prefix/bin/python3.13
built=$prefix/.kafkawire-built # written last: names the Debian version built

say() { printf 'test-py313: %s\n' "$*" >&2; }

cannot() {
  if [ "${KAFKAWIRE_SKIP_PY313:-}" = 1 ]; then
    say "SKIPPED, Python 3.13 was not tested: $* (KAFKAWIRE_SKIP_PY313=1)"
    exit 0
  fi
  say "cannot build Python 3.13 on this machine: $*"
  say "set KAFKAWIRE_SKIP_PY313=1 to skip it knowingly"
  exit 1
}

usable() {
  [ -f "$built" ] && "$python" -c "import $NEEDED_MODULES" 2>/dev/null
}

install_build_deps() {
  local missing=() package
  for package in "${BUILD_DEPS[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing build dependencies from Debian's packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Downloads the source package into folder $1 through a private apt configuration.
fetch_source() {
  local apt=$cache/apt codename mirror
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  # trixie is served by the mirror this machine already uses for its own release.
  mirror=$(apt-get indextargets --format '$(REPO_URI)' "Release: $codename" | head -n 1)
  [ -n "$mirror" ] || cannot "apt has no repository for this machine's release ('$codename')"
  mkdir -p "$apt/lists/partial" "$apt/sources.list.d"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
    >"$apt/sources.list"
  local options=(-q -o "Dir::Etc::sourcelist=$apt/sources.list"
    -o "Dir::Etc::sourceparts=$apt/sources.list.d" -o "Dir::State::lists=$apt/lists"
    -o APT::Sandbox::User=root)
  apt-get "${options[@]}" update >/dev/null
  (cd "$1" && apt-get "${options[@]}" source --download-only "$SOURCE" >/dev/null)
}

build() {
  command -v apt-get >/dev/null || cannot "apt-get is missing (the source comes through apt)"
  [ "$(id -u)" = 0 ] || cannot "not root (needed to install the build dependencies with apt-get)"
  install_build_deps

  local log version
  work=$(mktemp -d "$cache/build.XXXXXX") # global: the trap runs after build() returns
  trap 'rm -rf "$work"' EXIT
  log=$cache/build.log
  say "fetching the source of $SOURCE"
  fetch_source "$work"
  version=$(sed -n 's/^Version: //p' "$work"/python3.13_*.dsc)
  say "building CPython from python3.13 $version into $prefix (log: $log)"
  tar -xf "$work"/python3.13_*.orig.tar.?z -C "$work"
  rm -rf "$prefix"
  local started=$SECONDS
  if ! (cd "$work"/Python-* &&
    ./configure --prefix="$prefix" --with-ensurepip=install --disable-test-modules &&
    make -j2 && make install) >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    say "the build failed; see $log"
    exit 1
  fi
  "$python" -c "import $NEEDED_MODULES" || {
    say "the new interpreter lacks a module kafkawire needs; see $log"
    exit 1
  }
  echo "$version" >"$built"
  say "built $("$python" -V) in $((SECONDS - started)) s"
  rm -rf "$work"
  trap - EXIT
}

mkdir -p "$cache"
exec 9>"$cache/python3.13.lock" # one build at a time; others wait, then reuse it
flock 9
if usable; then
  say "reusing $("$python" -V) from python3.13 $(cat "$built") in $prefix"
else
  build
fi
flock -u 9

"${MAKE:-make}" test PYTHON="$python" VENV=.venv-py313 MYPY_FLAGS="--python-version 3.13" \
  KAFKAWIRE_REQUIRE_EXTENSIONS=1

#!/usr/bin/env bash
# Can this machine build the fast (OpenBLAS) binaries? Installs Debian's
# libopenblas-dev when it is missing and root or password-less sudo allows it.
#
#   infra/dev/openblas.sh ensure    exit 0 if the OpenBLAS build can be made;
#                                   else print why not (one line) and exit 1
#
# `make build` (and so make demo, make worker, make bench) runs it to choose
# the build of bin/starter and bin/worker; `make openblas` requires it.
# FLSWEEP_PUREGO=1 asks for the pure-Go build without trying.
set -uo pipefail

have_lib() { ldconfig -p 2>/dev/null | grep 'libopenblas\.so' >/dev/null; }

ensure() {
  if [ "${FLSWEEP_PUREGO:-}" = 1 ]; then
    echo "FLSWEEP_PUREGO=1"; return 1
  fi
  if [ "$(${GO:-go} env CGO_ENABLED)" != 1 ]; then
    echo "cgo is disabled (go env CGO_ENABLED is not 1)"; return 1
  fi
  local cc
  cc=$(${GO:-go} env CC)
  if ! command -v "${cc%% *}" >/dev/null 2>&1; then
    echo "no C compiler for cgo ($cc not found; Debian: apt-get install gcc)"; return 1
  fi
  have_lib && return 0
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
      echo "libopenblas-dev is not installed and installing it needs root or password-less sudo (run 'make openblas' as root)"; return 1
    fi
    sudo="sudo -n"
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "libopenblas-dev is not installed and there is no apt-get to install it"; return 1
  fi
  echo "installing libopenblas-dev (Debian) for the fast build" >&2
  if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq libopenblas-dev; } >&2; then
    echo "libopenblas-dev could not be installed (apt-get failed: no network?)"; return 1
  fi
  have_lib || { echo "libopenblas-dev was installed but ldconfig does not list libopenblas.so"; return 1; }
}

case "${1:-}" in
ensure) ensure ;;
*) echo "usage: $0 ensure" >&2; exit 2 ;;
esac

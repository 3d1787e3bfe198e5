#!/usr/bin/env bash
# ONNX Runtime's C/C++ API headers for the kernel library (src/kernels), from
# Debian's libonnxruntime-dev (1.21.0, API 21, in Debian 13 "trixie"), into
# build/onnxruntime-headers. On a machine whose own apt sources lack the
# package (Debian 12), the package alone is downloaded through a private
# sources list and state directory: the system's apt configuration is left
# as it is, and nothing is installed. Exits 0 without headers when the
# package cannot be had (the build then leaves the kernel library out and
# mode ONNX runs the portable graph).
set -euo pipefail
dest="${1:-build/onnxruntime-headers}"
header="$dest/usr/include/onnxruntime/onnxruntime_cxx_api.h"
if [ -f "$header" ] || [ -f /usr/include/onnxruntime/onnxruntime_cxx_api.h ]; then
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
# The mirror the machine's own sources use (deb822 or one-line format).
mirror="$(grep -rhE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
  | grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -n1 || true)"
mirror="${mirror:-http://deb.debian.org/debian}"
echo "deb ${mirror%/} trixie main" > "$work/sources.list"
apt_private=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache" -o APT::Sandbox::User=root)
if ! apt-get "${apt_private[@]}" update -qq >/dev/null 2>&1 \
  || ! (cd "$work" && apt-get "${apt_private[@]}" download libonnxruntime-dev >/dev/null 2>&1); then
  echo "fetch_ort_headers: libonnxruntime-dev could not be downloaded; the kernel library will not be built" >&2
  exit 0
fi
mkdir -p "$dest"
dpkg -x "$work"/libonnxruntime-dev_*.deb "$dest"
test -f "$header"
echo "fetch_ort_headers: ONNX Runtime headers in $dest/usr/include/onnxruntime"

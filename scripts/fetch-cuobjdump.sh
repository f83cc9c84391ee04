#!/bin/sh
# Puts NVIDIA's cuobjdump in a cache folder and prints its path (the differential tests of the NVIDIA fatbin
# reader compare against it; test/native.ts finds it there or through OFFLOAD_KIT_CUOBJDUMP).
#
# Debian trixie's non-free nvidia-cuda-toolkit (CUDA 12.4) ships it; this machine's apt sources are not
# touched: a private APT_CONFIG with its own sources list, state and cache lives under the cache folder,
# `apt-get download` fetches just the .deb (no install, no root), and usr/bin/cuobjdump is taken out of it.
# Idempotent: once the binary is there (and runs), nothing is fetched again.
set -eu
cache="${OFFLOAD_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offload-kit}/cuobjdump"
bin="$cache/cuobjdump"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial" "$cache/apt/etc/preferences.d" "$cache/deb"
cat > "$cache/apt/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main non-free
SOURCES
cat > "$cache/apt/apt.conf" <<CONF
Dir::State "$cache/apt";
Dir::State::Lists "$cache/apt/lists";
Dir::State::status "/dev/null";
Dir::Cache "$cache/apt";
Dir::Cache::Archives "$cache/apt/archives";
Dir::Etc::SourceList "$cache/apt/sources.list";
Dir::Etc::SourceParts "/dev/null";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$cache/apt/etc/preferences.d";
APT::Architecture "amd64";
APT::Architectures "amd64";
Acquire::Languages "none";
APT::Sandbox::User "$(id -un)";
CONF
export APT_CONFIG="$cache/apt/apt.conf"
apt-get update -qq >&2
( cd "$cache/deb" && rm -f nvidia-cuda-toolkit_*.deb && apt-get download -qq nvidia-cuda-toolkit >&2 )
deb=$(ls "$cache/deb"/nvidia-cuda-toolkit_*.deb | head -n 1)
rm -rf "$cache/unpacked"
mkdir -p "$cache/unpacked"
dpkg-deb -x "$deb" "$cache/unpacked"
cp "$cache/unpacked/usr/bin/cuobjdump" "$bin.tmp"
chmod +x "$bin.tmp"
mv "$bin.tmp" "$bin"
rm -rf "$cache/unpacked" "$cache/deb"/*.deb
"$bin" --version >&2
echo "$bin"

#!/bin/sh
# Regenerates the Go code for request.fbs into parse/json/envelope/internal/envelopefb.
# Needs flatc (Debian: apt-get install flatbuffers-compiler). Run from any
# directory; `make generate` calls it. The output is committed so that builds
# never need flatc.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../envelope/internal"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flatc --go --go-namespace envelopefb -o "$tmp" "$here/request.fbs"
rm -rf "$out/envelopefb"
mkdir -p "$out/envelopefb"
cp "$tmp"/envelopefb/*.go "$out/envelopefb/"
gofmt -w "$out/envelopefb"

#!/bin/sh
# Regenerate the autotools files (configure, Makefile.in) from a checkout.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force >/dev/null

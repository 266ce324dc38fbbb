#!/usr/bin/env bash
# Installs cargo-fuzz (libFuzzer driver) once. Idempotent.
set -euo pipefail
command -v cargo-fuzz >/dev/null || cargo install --locked --quiet cargo-fuzz

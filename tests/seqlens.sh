#!/bin/sh
# tests/seqlens.sh COUNT MAX SEED: COUNT sequence lengths from 1 to MAX, comma-separated,
# the same on every machine (Park-Miller's generator in awk's exact integer range;
# awk's own rand() differs between awk builds).
awk -v n="$1" -v max="$2" -v x="$3" 'BEGIN {
    for (i = 0; i < n; i++) {
        x = (x * 16807) % 2147483647
        printf "%s%d", i ? "," : "", 1 + x % max
    }
}'

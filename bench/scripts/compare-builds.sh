#!/usr/bin/env bash
# Before/after ratios of two builds on one file, measured in the same run:
#   bench/scripts/compare-builds.sh BASE_TARGET NEW_TARGET FILE
# BASE_TARGET and NEW_TARGET are `target/release` directories holding `perfdata` and
# `perfdata-bench` (build each with `cargo build --release -p perfdata-bench -p perfdata-cli`;
# before the crate split: `-p perfdata`),
# e.g. one from a worktree of the base commit. Each row is the fastest of 5 alternating runs
# (so both builds see the same machine load); outputs go to a temporary directory.
set -euo pipefail
base=$1 new=$2 file=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
time_of() { # seconds of one run of "$@"
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    echo "$e - $s" | bc
}
row() { # NAME then a command where BIN and BENCH stand for the build's binaries
    local name=$1 bmin=999 nmin=999 t
    shift
    for _ in 1 2 3 4 5; do
        for build in base new; do
            local dir=$base
            [ $build = new ] && dir=$new
            rm -f "$out/o.data"
            local cmd=("${@//BIN/$dir/perfdata}")
            cmd=("${cmd[@]//BENCH/$dir/perfdata-bench}")
            if ! "$dir/perfdata" convert --help 2>/dev/null | grep -q -- '--output'; then
                # A build from before `-o`: convert took OUT positionally.
                local a kept=()
                for a in "${cmd[@]}"; do [ "$a" = -o ] || kept+=("$a"); done
                cmd=("${kept[@]}")
            fi
            t=$(time_of "${cmd[@]}")
            if [ $build = base ]; then
                bmin=$(echo "if ($t < $bmin) $t else $bmin" | bc)
            else
                nmin=$(echo "if ($t < $nmin) $t else $nmin" | bc)
            fi
        done
    done
    printf "%-32s base %.3f s  new %.3f s  new/base %.3f\n" "$name" "$bmin" "$nmin" \
        "$(echo "$nmin / $bmin" | bc -l)"
}
row "samples, file order" BENCH ours "$file"
row "samples, time order" BENCH ours "$file" --ordered
row "dump" BIN dump "$file"
row "dump --json" BIN dump --json "$file"
row "convert (copy)" BIN convert "$file" -o "$out/o.data"
row "convert --typed" BIN convert --typed "$file" -o "$out/o.data"
row "convert --endian big" BIN convert --endian big "$file" -o "$out/o.data"
row "convert --layout pipe" BIN convert --layout pipe "$file" -o "$out/o.data"
row "convert --compress" BIN convert --compress "$file" -o "$out/o.data"
row "report" BIN report "$file"

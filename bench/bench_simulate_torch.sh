#!/bin/sh
# `simulate` against PyTorch's CPU softmax computing the same zero counts, on the same cores, in one
# run: whole-process wall time and peak RSS of each, and the ratio torch / simulate (bench/README.md
# records the results). usage: bench/bench_simulate_torch.sh [path/to/alibi-blind] [threads]
#   threads: both sides use this many (default: every online core); CTX / HEADS in the environment
#   change the layer (default 8192 / 16). Needs GNU time (apt-get install -y time); torch is
#   optional: /usr/bin/python3 with torch 1.13 (apt-get install -y python3-torch), else only
#   simulate is timed.
set -eu
bin=${1:-build/alibi-blind}
threads=${2:-$(nproc)}
ctx=${CTX:-8192}
heads=${HEADS:-16}
here=$(dirname "$0")
py=/usr/bin/python3
[ -x "$bin" ] || { echo "bench_simulate_torch.sh: no executable at $bin" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_simulate_torch.sh: needs GNU time (apt-get install -y time)" >&2; exit 2; }
have_torch=0
if [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null; then
    have_torch=1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

zeros_of() {   # the matrix_zeros total of a simulate --format json report
    "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["matrix_zeros"])' "$1" 2>/dev/null ||
        sed -n 's/.*"matrix_zeros": *\([0-9]*\).*/\1/p' "$1" | tail -n 1
}

printf '%-28s %9s %9s %9s %9s %7s %12s %12s\n' case "sim s" "sim MB" "torch s" "torch MB" ratio "sim zeros" "torch zeros"
# case: label | simulate pipeline | torch preset | logit std
while IFS='|' read -r label pipe preset std; do
    [ -n "$label" ] || continue
    set -- simulate --heads "$heads" --ctx "$ctx" --pipeline "$pipe" --threads "$threads" --format json
    [ "$std" = 0 ] || set -- "$@" --logit-std "$std" --seed 1
    /usr/bin/time -f '%e %M' -o "$tmp/t1" "$bin" "$@" >"$tmp/sim.json"
    read -r s_wall s_kb <"$tmp/t1"
    s_zero=$(zeros_of "$tmp/sim.json")
    t_wall=- t_mb=- ratio=- t_zero=-
    if [ "$have_torch" = 1 ]; then
        /usr/bin/time -f '%e %M' -o "$tmp/t2" "$py" "$here/torch_softmax.py" --preset "$preset" --heads "$heads" \
            --ctx "$ctx" --logit-std "$std" --threads "$threads" >"$tmp/torch.txt"
        read -r t_wall t_kb <"$tmp/t2"
        t_mb=$(awk -v k="$t_kb" 'BEGIN { printf "%.0f", k / 1024 }')
        t_zero=$(awk '{ print $2 }' "$tmp/torch.txt")
        ratio=$(awk -v a="$t_wall" -v b="$s_wall" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
    fi
    printf '%-28s %9s %9s %9s %9s %7s %12s %12s\n' "$label" "$s_wall" \
        "$(awk -v k="$s_kb" 'BEGIN { printf "%.1f", k / 1024 }')" "$t_wall" "$t_mb" "$ratio" "$s_zero" "$t_zero"
done <<'EOF'
eager|eager|eager|0
eager (torch's sum and exp)|eager,sum=vec8,exp=sleef|eager|0
bloom-hf|bloom-hf|bloom-hf|0
falcon-rw-hf|falcon-rw-hf|falcon-rw-hf|0
mpt|mpt|mpt|0
eager, Gaussian std 2|eager|eager|2
EOF
[ "$have_torch" = 1 ] || echo "(torch not importable by $py: PyTorch columns skipped)"
echo "threads: $threads, N = $ctx, H = $heads; ratio = torch wall / simulate wall (whole processes)"

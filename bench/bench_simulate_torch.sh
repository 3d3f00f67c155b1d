#!/bin/sh
# `simulate` against PyTorch's CPU softmax computing the same zero counts, on the same cores, in one
# run: whole-process wall time and peak RSS of each, and the ratio torch / simulate (bench/README.md
# records the results). usage: bench/bench_simulate_torch.sh [path/to/alibi-blind] [threads]
#   threads: both sides use this many (default: every online core); CTX / HEADS in the environment
#   change the layer (default 8192 / 16), ONLY (an extended regex) keeps the cases whose label
#   matches. CPU = user + system seconds, the figure to compare on a machine shared with other work. Needs GNU time (apt-get install -y time); torch is
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

printf '%-28s %7s %7s %7s %7s %7s %8s %6s %7s %10s %10s\n' case "sim s" "sim CPU" "sim MB" \
    "torch s" "t. CPU" "torch MB" ratio "CPU r." "sim zeros" "t. zeros"
# case: label | simulate pipeline | torch preset | logit std
while IFS='|' read -r label pipe preset std; do
    [ -n "$label" ] || continue
    if [ -n "${ONLY:-}" ] && ! printf '%s\n' "$label" | grep -Eq "$ONLY"; then
        continue
    fi
    set -- simulate --heads "$heads" --ctx "$ctx" --pipeline "$pipe" --threads "$threads" --format json
    [ "$std" = 0 ] || set -- "$@" --logit-std "$std" --seed 1
    /usr/bin/time -f '%e %M %U %S' -o "$tmp/t1" "$bin" "$@" >"$tmp/sim.json"
    read -r s_wall s_kb s_u s_s <"$tmp/t1"
    s_cpu=$(awk -v a="$s_u" -v b="$s_s" 'BEGIN { printf "%.2f", a + b }')
    s_zero=$(zeros_of "$tmp/sim.json")
    t_wall=- t_mb=- ratio=- t_zero=- t_cpu=- cratio=-
    if [ "$have_torch" = 1 ]; then
        /usr/bin/time -f '%e %M %U %S' -o "$tmp/t2" "$py" "$here/torch_softmax.py" --preset "$preset" \
            --heads "$heads" --ctx "$ctx" --logit-std "$std" --threads "$threads" >"$tmp/torch.txt"
        read -r t_wall t_kb t_u t_s <"$tmp/t2"
        t_cpu=$(awk -v a="$t_u" -v b="$t_s" 'BEGIN { printf "%.2f", a + b }')
        cratio=$(awk -v a="$t_cpu" -v b="$s_cpu" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
        t_mb=$(awk -v k="$t_kb" 'BEGIN { printf "%.0f", k / 1024 }')
        t_zero=$(awk '{ print $2 }' "$tmp/torch.txt")
        ratio=$(awk -v a="$t_wall" -v b="$s_wall" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
    fi
    printf '%-28s %7s %7s %7s %7s %7s %8s %6s %7s %10s %10s\n' "$label" "$s_wall" "$s_cpu" \
        "$(awk -v k="$s_kb" 'BEGIN { printf "%.1f", k / 1024 }')" "$t_wall" "$t_cpu" "$t_mb" "$ratio" "$cratio" \
        "$s_zero" "$t_zero"
done <<'EOF'
eager|eager|eager|0
eager (torch's sum and exp)|eager,sum=vec8,exp=sleef|eager|0
bloom-hf|bloom-hf|bloom-hf|0
falcon-rw-hf|falcon-rw-hf|falcon-rw-hf|0
mpt|mpt|mpt|0
eager, Gaussian std 2|eager|eager|2
EOF
[ "$have_torch" = 1 ] || echo "(torch not importable by $py: PyTorch columns skipped)"
echo "threads: $threads, N = $ctx, H = $heads; ratio = torch wall / simulate wall (whole processes),"
echo "CPU r. = torch CPU / simulate CPU; zeros = matrix zeros over all heads (Gaussian: different draws)"

#!/bin/sh
# The HTML report of an encoder is about its bidirectional layer (issue 19): report_bidir.sh BINARY WORKDIR.
# The page of jina-embeddings-v2-base-en names the attention, shows the bidirectional fractions (end row,
# middle row, N x N) and designs for the bidirectional matrix; --attention causal gives the causal page.
# The numbers themselves are checked against PyTorch in tests/torch/validate_encoders.py (report case).
set -u
bin=$1
work=$2
mkdir -p "$work" || exit 1
page="$work/jina.html"
fail=0
expect() { grep -q -- "$2" "$1" || { echo "missing in $1: $2"; fail=1; }; }
refuse() { ! grep -q -- "$2" "$1" || { echo "unexpected in $1: $2"; fail=1; }; }
"$bin" report --model jina-embeddings-v2-base-en --ctx 512 --output "$page" 2>/dev/null || { echo "report failed"; exit 1; }
expect "$page" "<tr><th>attention</th><td>bidirectional (encoder)"
expect "$page" "<h2>Fractions (bidirectional)</h2>"
expect "$page" "<tr><th>row fraction (middle row, i = ⌊(N - 1)/2⌋)</th>"
expect "$page" "<tr><th>matrix fraction (all N × N entries)</th>"
expect "$page" "<tr><th>matrix fraction through the kernel (exact zeros, N × N)</th><td>10.85 %</td></tr>"
expect "$page" "512 × 512 bidirectional matrix"
refuse "$page" "causal matrix"
refuse "$page" "matrix fraction (causal entries)"
causal="$work/jina-causal.html"
"$bin" report --model jina-embeddings-v2-base-en --ctx 512 --attention causal --output "$causal" 2>/dev/null ||
    { echo "report --attention causal failed"; exit 1; }
expect "$causal" "matrix fraction (causal entries)"
refuse "$causal" "<tr><th>attention</th>"
[ "$fail" = 0 ] && echo "report_bidir: the encoder's page is bidirectional"
exit "$fail"

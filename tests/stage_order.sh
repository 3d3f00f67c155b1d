#!/bin/sh
# The library's stages without cycles (issue 17, item 3): every #include of src/lib and include/abl must
# point at its own stage or one below it, in the order written once in docs/architecture.md (its line
# "stage order: a < b < ..."). A file in src/lib/<stage>/ or include/abl/<stage>/ belongs to <stage>; a file
# directly in src/lib (abl_internal.h, the helpers every stage shares) belongs to the lowest stage. An
# include is resolved as the compiler does for this project (the including file's folder, then include/,
# then src/lib/); a quoted include that resolves to no file of the tree fails too, so that no arrow hides.
#
# usage: stage_order.sh [ROOT]   (ROOT: the source tree, default: this script's ../)
# Exit 0 when every arrow runs downwards; 1 with one line per arrow against the order otherwise.
set -u
root=${1:-$(dirname "$0")/..}
doc="$root/docs/architecture.md"
order=$(sed -n 's/^[[:space:]]*stage order:[[:space:]]*//p' "$doc" 2>/dev/null | head -n 1)
if [ -z "$order" ]; then
    echo "stage_order: no 'stage order: a < b < ...' line in $doc"
    exit 1
fi
list=$(mktemp) || exit 1
trap 'rm -f "$list"' EXIT
(cd "$root" && find src/lib include/abl -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort) > "$list"
if [ ! -s "$list" ]; then
    echo "stage_order: no source files under $root/src/lib or $root/include/abl"
    exit 1
fi

awk -v root="$root" -v order="$order" '
function stage_of(p,    a) {
    if (p ~ /^src\/lib\/[^\/]+\//) { split(p, a, "/"); return a[3] }
    if (p ~ /^include\/abl\/[^\/]+\//) { split(p, a, "/"); return a[3] }
    if (p ~ /^src\/lib\/[^\/]+$/) return lowest
    return ""
}
function dir_of(p) { sub(/\/[^\/]*$/, "", p); return p }
function resolve(from, name, quoted) {
    if (quoted && ((dir_of(from) "/" name) in known)) return dir_of(from) "/" name
    if (("include/" name) in known) return "include/" name
    if (quoted && (("src/lib/" name) in known)) return "src/lib/" name
    return ""
}
BEGIN {
    n = split(order, s, /[ \t]*<[ \t]*/)
    for (i = 1; i <= n; i++) {
        gsub(/[ \t]/, "", s[i])
        if (s[i] == "" || (s[i] in rank)) { print "stage_order: bad stage order line: " order; bad = 1; exit 1 }
        rank[s[i]] = i
    }
    lowest = s[1]
}
{ known[$0] = 1; files[++nf] = $0 }
END {
    if (bad) exit 1
    for (f = 1; f <= nf; f++) {
        p = files[f]
        st = stage_of(p)
        if (!(st in rank)) {
            printf "%s: stage %s is not in the stage order (%s)\n", p, st, order
            fail++
            continue
        }
        path = root "/" p
        line = 0
        while ((getline l < path) > 0) {
            line++
            if (l !~ /^[ \t]*#[ \t]*include[ \t]*["<]/) continue
            quoted = l ~ /^[ \t]*#[ \t]*include[ \t]*"/
            name = l
            sub(/^[ \t]*#[ \t]*include[ \t]*["<]/, "", name)
            sub(/[">].*$/, "", name)
            target = resolve(p, name, quoted)
            if (target == "") {
                if (quoted) {
                    printf "%s:%d: #include \"%s\" is no file of src/lib or include\n", p, line, name
                    fail++
                }
                continue
            }
            ts = stage_of(target)
            if (!(ts in rank)) continue   # reported with the file itself
            if (rank[ts] > rank[st]) {
                printf "%s:%d: %s includes %s (%s): against the stage order %s\n", p, line, st, target, ts, order
                fail++
            }
            arrows++
        }
        close(path)
    }
    if (fail) exit 1
    printf "%d files, %d includes between them, all downwards: %s\n", nf, arrows, order
}' "$list"

#!/bin/sh
# How often one run parses its inputs (issue 17: text is parsed once at the boundary). Counts, with gdb
# in batch mode (a breakpoint on each parser, Python's gdb API to count), the calls of each parser in
#   report  --model bloom-560m --output DIR/report.html
#   design  --heads 1 --ctx 2048 --dtype fp16 --pipeline bloom-hf   (the golden design_bloom_fp16)
#   analyze --model bloom-560m
# prints one line per run and parser, and fails when a count is over its maximum.
#
# usage: parse_count.sh BINARY [--max N] [--max-for RUN.PARSER=N]... [--parser NAME=FUNC[,FUNC...]]...
#   --parser   a parser and the functions that enter it (defaults: schedule=abl_schedule_spec_parse,
#              abl_schedule_parse, pipeline=abl_pipeline_spec_parse,abl_pipeline_parse_msg). A call counts once: a call made
#              while another function of the same parser is on the stack (abl_pipeline_parse calling
#              abl_pipeline_parse_msg) is part of that parse. A name the binary lacks is an error (a
#              renamed parser must be named here, never silently counted as 0).
#   --max      the most calls allowed per run and parser (default: no limit, print only);
#   --max-for  the most for one run and parser (RUN: report, design or analyze), over --max.
# Needs gdb (exit 77, Skipped, without it) and a binary with debug information (RelWithDebInfo or
# Debug, the default build type: the breakpoints must also catch the inlined calls; exit 77 without).
set -u
bin=${1:?usage: parse_count.sh BINARY [--max N] [--max-for RUN.PARSER=N]... [--parser NAME=FUNCS]...}
shift
max=""
limits=""
parsers=""
while [ $# -gt 0 ]; do
  case $1 in
    --max) max=$2; shift 2 ;;
    --max-for) limits="$limits $2"; shift 2 ;;
    --parser) parsers="$parsers $2"; shift 2 ;;
    *) echo "parse_count.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$parsers" ] || parsers="schedule=abl_schedule_spec_parse,abl_schedule_parse pipeline=abl_pipeline_spec_parse,abl_pipeline_parse_msg"

command -v gdb >/dev/null 2>&1 || { echo "gdb not found (apt-get install gdb): Skipped"; exit 77; }
if ! objdump -h "$bin" 2>/dev/null | grep -q '\.debug_info'; then
  echo "$bin has no debug information (build type RelWithDebInfo or Debug): Skipped"
  exit 77
fi

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# The gdb script: one counting breakpoint per function; a hit counts when no older frame belongs to
# the same parser. At exit, one line "COUNT parser n" per parser.
cat > "$tmp/count.py" <<'EOF'
import gdb, os

groups = {}
for item in os.environ["ABL_PARSERS"].split():
    name, funcs = item.split("=", 1)
    groups[name] = funcs.split(",")
counts = {name: 0 for name in groups}
member = {f: name for name, funcs in groups.items() for f in funcs}

class Counter(gdb.Breakpoint):
    def __init__(self, func, group):
        super().__init__(func, internal=False)
        self.group = group
    def stop(self):
        frame = gdb.newest_frame().older()
        while frame is not None:
            if member.get(frame.name()) == self.group:
                return False
            frame = frame.older()
        counts[self.group] += 1
        return False

gdb.execute("set breakpoint pending off")
gdb.execute("set pagination off")
gdb.execute("set print thread-events off")
for func, group in member.items():
    try:
        missing = Counter(func, group).pending
    except gdb.error:
        missing = True
    if missing:
        print("NOFUNC %s" % func)
        gdb.execute("quit 3")

def report(event):
    for name in groups:
        print("COUNT %s %d" % (name, counts[name]))
gdb.events.exited.connect(report)
EOF

fail=0
count_run() { # NAME ARGS...
  run=$1
  shift
  ABL_PARSERS="$parsers" gdb -nx -batch -q -x "$tmp/count.py" -ex run --args "$bin" "$@" \
    > "$tmp/$run.gdb" 2>&1 < /dev/null
  if grep -q '^NOFUNC' "$tmp/$run.gdb"; then
    echo "parse_count.sh: $(sed -n 's/^NOFUNC //p' "$tmp/$run.gdb" | head -1) is not a function of $bin (--parser)"
    fail=1
    return
  fi
  if ! grep -q 'exited normally' "$tmp/$run.gdb"; then
    echo "parse_count.sh: $run did not exit 0:"
    tail -20 "$tmp/$run.gdb"
    fail=1
    return
  fi
  grep '^COUNT ' "$tmp/$run.gdb" | while read -r _ parser n; do
    limit=$max
    for l in $limits; do
      [ "${l%%=*}" = "$run.$parser" ] && limit=${l#*=}
    done
    if [ -n "$limit" ] && [ "$n" -gt "$limit" ]; then
      echo "$run: $parser parsed $n times (at most $limit allowed)"
      echo over >> "$tmp/over"
    else
      echo "$run: $parser parsed $n times${limit:+ (at most $limit)}"
    fi
  done
}

count_run report report --model bloom-560m --output "$tmp/report.html"
count_run design design --heads 1 --ctx 2048 --dtype fp16 --pipeline bloom-hf
count_run analyze analyze --model bloom-560m
[ -f "$tmp/over" ] && fail=1
exit $fail

#!/usr/bin/env python3
"""10,000-character values for every text option of every command, in every output format (issue 17).

Walks the commands and options that `alibi-blind completion list` prints (the CLI's own table, so a new
option is covered without editing this file) and, for each option that takes a value, runs the command
with a 10,000-character value once per output format. Where a valid long value exists it is valid (a
slopes list of ~1,900 heads, a pipeline with its fields repeated, a list of formats, a number with
leading zeros); elsewhere it is a long invalid value. Each run must end one of two ways:
  - refused: exit 2, nothing on stdout, exactly one line on stderr, naming the option; or
  - run: exit 0 (1 for the checking commands), and wherever the value is echoed (stdout, or the file
    --output names) it is there whole, never cut.
Also the issue's two reproducers: analyze --pipeline eager with 421- and 861-character slopes lists,
json and text, must echo the list whole.

usage: long_values.py [--rotate-formats] ALIBI_BLIND [COMMAND...]   (commands: all by default)

--rotate-formats (the sanitizer build only, tests/CMakeLists.txt; docs/ci.md): each option once, in one of
its command's formats, taken in turn, instead of once per format. Every option's long value still goes
through the CLI's parser, and every format of every command still writes some long value, under
ASan+UBSan (what they look for: a read or write past a buffer, not a format's rule); the whole
option x format matrix runs in every other build.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

N = 10000
ROTATE = len(sys.argv) > 1 and sys.argv[1] == "--rotate-formats"
ARGS = sys.argv[2:] if ROTATE else sys.argv[1:]
BIN = os.path.abspath(ARGS[0])
ONLY = set(ARGS[1:])

# A fast, valid invocation of each command, which the option under test is added to (or replaces in).
BASE = {
    "analyze": ["--heads", "4", "--ctx", "64"],
    "check": ["--model", "bloom-560m", "--ctx", "64"],
    "design": ["--heads", "2", "--ctx", "64", "--pipeline", "eager"],
    "figure": ["1b", "--heads", "4", "--until", "64"],
    "models": [],
    "plot": ["bias", "--heads", "4", "--ctx", "64", "--output", "OUT.svg"],
    "report": ["--heads", "4", "--ctx", "64", "--output", "OUT.html"],
    "reproduce": [],
    "simulate": ["--heads", "4", "--ctx", "16", "--pipeline", "eager"],
    "table": ["8"],
    "thresholds": [],
    "verify": ["--dtype", "bf16"],
}
COUNT = {"refused": 0, "ran": 0, "echoed whole": 0}
CHECKING = {"check", "reproduce", "verify"}  # exit 1 is a verdict, not an error
FORMATS = ["text", "markdown", "csv", "json", "latex", "python", "slopes"]


def padded(s, n=N):
    """s made exactly n characters long by repeating it (cut at a separator when it is a list)."""
    out = s
    while len(out) < n:
        out += s
    return out[:n]


def slopes_list(n=N):
    """'slopes:0.1,0.2,...' exactly n characters, every number distinct so a cut shows."""
    parts, i = [], 1
    while len("slopes:" + ",".join(parts + ["0.%d" % i])) <= n:
        parts.append("0.%d" % i)
        i += 1
    s = "slopes:" + ",".join(parts)
    return s + "1" * (n - len(s))  # the last number grows digits: still a slope in (0, 1)


def pipeline_list(n=N):
    s = "eager"
    fields = [",bias-dtype=bf16", ",sum=exact", ",exp=correct"]
    k = 0
    while len(s) + len(fields[k % 3]) <= n:
        s += fields[k % 3]
        k += 1
    return s


def zero_padded(v, n=N):
    sign = "-" if v.startswith("-") else ""
    v = v.lstrip("-")
    return sign + "0" * (n - len(v) - len(sign)) + v


def distinct_text(n=N):
    """Text whose every 6-character window is unique, so a cut anywhere is visible."""
    s = "".join("x%05d" % i for i in range(n // 6 + 1))
    return s[:n]


def value_for(cmd, opt, metavar):
    if opt == "--slopes":
        return slopes_list(), True
    if opt == "--pipeline":
        return pipeline_list(), True
    if opt in ("--dtype",) and metavar == "LIST":
        return padded("bf16,fp16,fp32,")[: N - 1].rstrip(",") + "", True
    if opt == "--convention" and metavar == "LIST":
        return padded("paper,ieee,").rstrip(","), True
    if opt == "--mitigate":
        return padded("C,E,L,S,").rstrip(","), True
    if opt == "--targets":
        return padded("40,").rstrip(","), True
    numeric = {"--ctx": "64", "--heads": "4", "--head": "1", "--until": "64", "--step": "8",
               "--digits": "10", "--threads": "1", "--seed": "7", "--width": "200", "--height": "200",
               "--window": "32", "--softcap": "50", "--clamp": "-87", "--logit": "-1",
               "--logit-budget": "-1", "--logit-std": "1", "--max-blind-heads": "4",
               "--max-row-fraction": "0.5"}
    if opt in numeric:
        v = zero_padded(numeric[opt])
        if cmd == "analyze" and opt in ("--softcap", "--clamp", "--logit"):
            pass
        return v, False
    if opt == "--logit-range":
        return "-" + zero_padded("1", N // 2 - 1) + ":" + zero_padded("1", N - N // 2 - 1), False
    if metavar in ("FILE", "PATH", "DIR"):
        # a long path: ./x00000/x00001/... (components under NAME_MAX, the whole over PATH_MAX)
        return padded("./" + "/".join("d%04d" % i for i in range(N // 6)))[:N], True
    return distinct_text(), True


def commands():
    out = subprocess.run([BIN, "completion", "list"], capture_output=True, text=True, check=True).stdout
    opts = {}
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "command":
            opts.setdefault(w[1], [])
        elif len(w) == 4 and w[0] == "option" and w[3] != "-":
            opts.setdefault(w[1], []).append((w[2], w[3]))
    return opts


def formats_of(cmd):
    help_ = subprocess.run([BIN, cmd, "--help"], capture_output=True, text=True).stdout
    m = re.search(r"--format FMT\s+(.*?)\n\s+--", help_, re.S)
    if not m:
        return [None]
    words = set(re.findall(r"[a-z]+", m.group(1)))
    return [f for f in FORMATS if f in words]


def squeeze(s):
    return re.sub(r"\s+", "", s)


def args_with(base, opt, value, tmp):
    args = [a.replace("OUT", os.path.join(tmp, "out")) for a in base]
    if opt == "--slopes" and "--heads" in args:  # a slopes: list sets the head count itself
        i = args.index("--heads")
        del args[i:i + 2]
    if opt in args:
        i = args.index(opt)
        args[i + 1] = value
    else:
        args += [opt, value]
    return args


def run_case(cmd, opt, value, fmt, echoable, tmp, is_path=False):
    args = [BIN, cmd] + args_with(BASE.get(cmd, []), opt, value, tmp)
    if fmt is not None and opt != "--format":
        args += ["--format", fmt]
    label = "%s %s <%d chars>%s" % (cmd, opt, len(value), "" if fmt is None else " --format " + fmt)
    try:
        p = subprocess.run(args, capture_output=True, cwd=tmp, timeout=120)
    except subprocess.TimeoutExpired:
        return label + ": timed out"
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if p.returncode == 2:
        lines = err.splitlines()
        if out:
            return label + ": exit 2 with %d bytes on stdout" % len(out)
        if len(lines) != 1 or not err.endswith("\n"):
            return label + ": exit 2 with %d lines on stderr: %r" % (len(lines), err[:300])
        # a file the user named may be named by its path instead (the file is the input at fault)
        if opt not in lines[0] and not (is_path and value[:40] in lines[0]):
            return label + ": exit 2, but the message does not name %s: %r" % (opt, lines[0][:300])
        COUNT["refused"] += 1
        return None
    if p.returncode == 0 or (p.returncode == 1 and cmd in CHECKING):
        written = out
        for a, b in zip(args, args[1:]):
            if a == "--output" and b != "-" and os.path.exists(os.path.join(tmp, b)):
                with open(os.path.join(tmp, b), "rb") as f:
                    written += f.read().decode("utf-8", "replace")
        if echoable:
            body, v = squeeze(written), squeeze(value)
            head = v[:64]
            if head in body and v not in body:
                return label + ": the value is echoed cut (its first 64 characters are there, not all %d)" % len(v)
            COUNT["echoed whole" if head in body else "ran"] += 1
        else:
            COUNT["ran"] += 1
        return None
    return label + ": exit %d: %r" % (p.returncode, err[-300:])


def reproducers(tmp):
    """The issue's two: 421- and 861-character slopes lists on analyze --pipeline eager, json and text."""
    fails = []
    for n in (421, 861):
        v = slopes_list(n)
        for fmt in ("json", "text"):
            args = [BIN, "analyze", "--pipeline", "eager", "--ctx", "1024", "--slopes", v, "--format", fmt, "--wide"]
            p = subprocess.run(args, capture_output=True, text=True, cwd=tmp)
            if p.returncode != 0 or squeeze(v) not in squeeze(p.stdout):
                fails.append("analyze --pipeline eager --slopes <%d chars> --format %s: list not whole (exit %d)"
                             % (n, fmt, p.returncode))
    # figure's "heads" line lists every head (it stopped near 4,096 bytes: 71 of 400 heads)
    p = subprocess.run([BIN, "figure", "1b", "--heads", "400", "--until", "64", "--format", "json"],
                       capture_output=True, text=True, cwd=tmp)
    if p.returncode != 0 or len(json.loads(p.stdout)["heads"]) != 400:
        fails.append("figure 1b --heads 400 --format json: the heads line does not list all 400 heads")
    return fails


def formats_for(opt, fmts, i, count):
    """The formats the i-th of a command's count options runs in: all of them, or with --rotate-formats
    every m-th from i (m: the smaller of count and the number of formats), so that the options take the
    formats in turn and every format is still taken."""
    if opt == "--format":
        return [None]
    if not ROTATE:
        return fmts
    m = min(count, len(fmts))
    return [f for k, f in enumerate(fmts) if k % m == i % m]


def main():
    fails, runs = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        fails += reproducers(tmp)
        for cmd, opts in sorted(commands().items()):
            if ONLY and cmd not in ONLY:
                continue
            fmts = formats_of(cmd)
            valued = [o for o in opts if o[0] != "--format"]
            for opt, metavar in opts:
                value, echoable = value_for(cmd, opt, metavar)
                for fmt in formats_for(opt, fmts, valued.index((opt, metavar)) if opt != "--format" else 0, len(valued)):
                    runs += 1
                    f = run_case(cmd, opt, value, fmt, echoable, tmp, metavar in ("FILE", "PATH", "DIR"))
                    if f:
                        fails.append(f)
                        print("FAIL " + f, flush=True)
    print("long values: %d runs%s (%s), %d failures"
          % (runs, " (formats in turn)" if ROTATE else "", ", ".join("%s %d" % kv for kv in COUNT.items()), len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

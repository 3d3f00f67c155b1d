#!/usr/bin/python3
"""A field's type never depends on its value (issue 21), and CSV reads without surprises.

usage: json_types.py BINARY SCHEMA_DIR CLI_DIR

1. Runs every command with --format json on inputs that push values to their extremes (tiny and huge slopes,
   --distance log, deltas beyond 2^53 and beyond 1000 digits, contexts beyond 2^53, never-blind heads, fp8,
   fp32, fp64, the models list, a model without a head count, check with blind and sighted heads, ...),
   validates each output against docs/schema/<command>.schema.json, and with the JSON golden outputs of
   CLI_DIR checks that no field (a path such as heads[].delta, per command) has two types other than null:
   integer and float count as one type (number), null stands for "none" and may sit beside any one type;
   and no number field is an integer literal (Python int) in one output and a real (float) in another: a
   real-valued field is always written with a fraction or exponent part (1.0, not 1).
2. Checks the rules the type rule implies: schema_version is 2 everywhere; an integer field `k` comes with
   `k_exact` (a string, or null exactly when `k` is null for want of a value), `k` is the exact integer when it
   is at most 2^53 and null above it; `heads` is always a list; every per-head record has a float `slope`;
   check lists every head with a boolean `blind`.
3. CSV: the same cases with --format csv read with Python's csv and numpy's genfromtxt: where JSON has null in
   a numeric column, CSV has `nan` and numpy reads NaN (never -1 or 0); every other number reads as the JSON
   number. Exit 77 (skipped) without python3-jsonschema or numpy.
"""
import csv
import io
import json
import math
import os
import subprocess
import sys

try:
    import jsonschema
    import numpy
except ImportError as e:
    print(f"{e.name} not installed: skipped")
    sys.exit(77)

BIN, SCHEMA_DIR, CLI_DIR = sys.argv[1], sys.argv[2], sys.argv[3]
TWO53 = 2 ** 53
fail = []

# Inputs at the extremes; each runs as `BIN ARGS --format json` and `... --format csv`.
CASES = [
    ["analyze", "--heads", "16", "--ctx", "2048"],
    ["analyze", "--heads", "16", "--ctx", "2048", "--distance", "log"],          # deltas beyond 2^53
    ["analyze", "--ctx", "2048", "--slopes", "slopes:1e-7", "--distance", "log"],  # beyond 1000 digits
    ["analyze", "--heads", "4", "--ctx", "1e18"],                                # context and counts beyond 2^53
    ["analyze", "--heads", "9", "--ctx", "2048", "--clamp", "-87"],              # never blind
    ["analyze", "--ctx", "4096", "--slopes", "slopes:100,1e-30"],                 # huge and tiny slopes
    ["analyze", "--heads", "8", "--ctx", "4096", "--dtype", "fp8-e4m3fn"],
    ["analyze", "--heads", "8", "--ctx", "4096", "--dtype", "fp32"],
    ["analyze", "--heads", "8", "--ctx", "4096", "--dtype", "fp64"],
    ["analyze", "--ctx", "100", "--dtype", "fp8-e4m3fn", "--convention", "ftz", "--level", "weight",
     "--slopes", "slopes:1e-20"],
    ["analyze", "--heads", "4", "--ctx", "2048", "--dtype", "bf16,fp16,fp32"],
    ["analyze", "--model", "bloom-560m", "--ctx", "2048"],
    ["analyze", "--model", "bloom-560m", "--ctx", "64"],
    ["check", "--model", "bloom-560m", "--ctx", "2048", "--max-blind-heads", "16"],  # blind and sighted heads
    ["check", "--model", "bloom-560m", "--ctx", "64"],                            # no blind head
    ["check", "--model", "mpt-7b", "--ctx", "2048", "--dtype", "fp32"],
    ["simulate", "--heads", "4", "--ctx", "300"],
    ["simulate", "--heads", "2", "--ctx", "256", "--slopes", "slopes:8,1e-9", "--dtype", "fp16"],
    ["simulate", "--heads", "2", "--ctx", "128", "--logit-std", "1", "--seed", "9223372036854775807"],
    ["simulate", "--model", "bloom-560m", "--ctx", "256", "--predict"],
    ["simulate", "--model", "jina-embeddings-v2-base-en", "--ctx", "128", "--predict"],
    ["design", "--heads", "2", "--ctx", "512"],
    ["design", "--clamp", "--heads", "16", "--ctx", "2048"],
    ["analyze", "--heads", "9", "--ctx", "2048", "--mitigate", "C,E,L,S"],
    ["analyze", "--heads", "8", "--ctx", "4096", "--level", "weight", "--window", "3000"],
    ["models"],
    ["models", "falcon-rw-7b"],
    ["models", "replit-code-v1-3b"],                                              # no head count
    ["table", "1"], ["table", "5"], ["table", "8"],
    ["figure", "1a", "--ctx", "256"],
    ["thresholds", "--dtype", "fp8-e4m3fn,fp32,fp64"],
]
# Keys a report writes as an exact integer (src/lib/report/abl_report.c, integer_keys).
INTEGER_KEYS = {"context", "window", "delta", "delta_ieee", "delta_exponent", "delta_softcap_min",
                "delta_softcap_max", "delta_logit_lo", "delta_logit_hi", "delta_1", "delta_h", "delta_1_ieee",
                "delta_h_ieee", "first_blind", "first_blind_1", "first_blind_h", "first_influence_zero",
                "row_zeros", "matrix_zeros", "middle_row_zeros", "row_influence_zeros",
                "matrix_influence_zeros", "forward_first_blind", "gradient_only_row", "gradient_only_matrix",
                "seed", "shift"} | {f"d{i}" for i in range(1, 10)}


def schema_key(args):
    if args[0] in ("table", "figure"):
        return f"{args[0]}-{args[1]}"
    return args[0]


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "list" if isinstance(v, list) else "object"


types = {}  # (command, path) -> {type: first source}
numbers = {}  # (command, path) -> {"integer" or "real": first source}


def walk(v, path, where, cmd):
    types.setdefault((cmd, path), {}).setdefault(kind(v), where)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        # json.loads reads 1 as int and 1.0 as float: a real field spelled `1` on one input is a different
        # Python type from `0.5` on another, so integer and real literals must not mix in one field.
        numbers.setdefault((cmd, path), {}).setdefault("integer" if isinstance(v, int) else "real", where)
    if isinstance(v, dict):
        for k, x in v.items():
            walk(x, f"{path}.{k}", where, cmd)
    elif isinstance(v, list):
        for x in v:
            walk(x, path + "[]", where, cmd)


def check_rules(v, where, cmd, path=""):
    """The rules of one object, recursively."""
    if isinstance(v, list):
        for x in v:
            check_rules(x, where, cmd, path + "[]")
        return
    if not isinstance(v, dict):
        return
    for k, x in v.items():
        if k == "sources":   # {setting: where its value came from}: keys are setting names, values text
            continue
        if k in INTEGER_KEYS:
            if f"{k}_exact" not in v:
                fail.append(f"{where}: {path}.{k} has no {k}_exact")
                continue
            e = v[f"{k}_exact"]
            if e is None:
                if x is not None:
                    fail.append(f"{where}: {path}.{k} = {x} beside a null {k}_exact")
            elif not isinstance(e, str):
                fail.append(f"{where}: {path}.{k}_exact is {kind(e)}, not a string")
            elif e.isdigit():
                want = int(e) if int(e) <= TWO53 else None
                if x != want or isinstance(x, bool) or (x is not None and not isinstance(x, int)):
                    fail.append(f"{where}: {path}.{k} = {x!r}, want {want!r} for {k}_exact {e[:30]}")
            elif x is not None:   # e-notation: beyond 1000 digits, far beyond 2^53
                fail.append(f"{where}: {path}.{k} = {x!r} beside {k}_exact {e[:30]}")
        if k == "heads" and not isinstance(x, list):
            fail.append(f"{where}: {path}.heads is {kind(x)}, not a list")
        if k in ("heads", "analyses") and isinstance(x, list):
            for h in x:
                if isinstance(h, dict) and "slope_exact" in h and not isinstance(h.get("slope"), (int, float)):
                    fail.append(f"{where}: {path}.{k}[] has slope_exact without a numeric slope")
        check_rules(x, where, cmd, f"{path}.{k}")


def run(args, fmt):
    p = subprocess.run([BIN] + args + ["--format", fmt], capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and not (args[0] == "check" and p.returncode == 1):   # check: 1 = the verdict fail
        fail.append(f"{' '.join(args)} --format {fmt}: exit {p.returncode}: {p.stderr.strip()[:200]}")
        return None
    return p.stdout


def rows_of(doc):
    """The table rows of a JSON document, each with its report's columns (a set: its analyses' rows)."""
    if "analyses" in doc:
        return [r for a in doc["analyses"] for r in rows_of(a)]
    if "points" in doc:   # figures: the heads are a meta line, the table is the points
        return doc["points"]
    for k, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(r, dict) for r in v) and k != "code_paths":
            return v
    return []


def check_csv(args, doc, text):
    """CSV against the JSON rows: null in a numeric column is nan, and numpy reads it as NaN."""
    what = " ".join(args) + " --format csv"
    rows = list(csv.DictReader(io.StringIO(text)))
    jrows = rows_of(doc)
    if len(rows) != len(jrows):
        fail.append(f"{what}: {len(rows)} CSV rows, {len(jrows)} JSON rows")
        return
    # genfromtxt knows no RFC 4180 quoting: a table with a quoted text cell (the models list) is read with
    # csv only (docs/schema/README.md says so); the tables of numbers are read with numpy as well.
    arr = None
    if '"' not in text:
        arr = numpy.atleast_1d(numpy.genfromtxt(io.StringIO(text), delimiter=",", names=True, dtype=None,
                                                encoding="utf-8", deletechars="", replace_space=None, comments=None))
    numeric = {}
    for j in jrows:
        for k, v in j.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                numeric[k] = True
    for i, (c, j) in enumerate(zip(rows, jrows)):
        for k, v in j.items():
            if k not in c or isinstance(v, (dict, list)):
                continue
            if v is None and numeric.get(k):
                if c[k] != "nan":
                    fail.append(f"{what}: row {i} {k}: JSON null, CSV {c[k]!r} (want nan)")
                got = arr[k][i] if arr is not None else math.nan
                if not (isinstance(got, (float, numpy.floating)) and math.isnan(got)):
                    fail.append(f"{what}: row {i} {k}: numpy reads {got!r} for a null (want NaN)")
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                if float(c[k]) != float(v):
                    fail.append(f"{what}: row {i} {k}: CSV {c[k]!r}, JSON {v!r}")
                if arr is not None and float(arr[k][i]) != float(v):
                    fail.append(f"{what}: row {i} {k}: numpy reads {arr[k][i]!r}, JSON {v!r}")


schemas = {n[: -len(".schema.json")]: json.load(open(os.path.join(SCHEMA_DIR, n), encoding="utf-8"))
           for n in os.listdir(SCHEMA_DIR) if n.endswith(".schema.json")}
# Every head of a model, as the catalogue counts them (`models --format json`), is in check's list.
head_counts = {m["model"]: m["head_count"] for m in json.loads(run(["models"], "json") or '{"models": []}')["models"]}
checked = 0
for args in CASES:
    out = run(args, "json")
    if out is None:
        continue
    what = " ".join(args)
    doc = json.loads(out)
    key = schema_key(args)
    for e in list(jsonschema.Draft202012Validator(schemas[key]).iter_errors(doc))[:3]:
        fail.append(f"{what}: {'/'.join(map(str, e.path))}: {e.message[:200]}")
    if doc.get("schema_version") != 2:
        fail.append(f"{what}: schema_version {doc.get('schema_version')!r}")
    walk(doc, "", what, key)
    check_rules(doc, what, key)
    if args[0] == "check":
        for h in doc["heads"]:
            if not isinstance(h.get("blind"), bool) or h["blind"] != (h["first_blind"] is not None):
                fail.append(f"{what}: head {h.get('head')}: blind {h.get('blind')!r}, first_blind {h['first_blind']!r}")
        want = head_counts.get(args[args.index("--model") + 1])
        if len(doc["heads"]) != want or [h["head"] for h in doc["heads"]] != list(range(1, want + 1)):
            fail.append(f"{what}: {len(doc['heads'])} heads listed, the catalogue says {want}")
    csv_text = run(args, "csv")
    if csv_text is not None and rows_of(doc):
        check_csv(args, doc, csv_text)
    checked += 1

# The goldens too: the same command's fields have the same types across them and the cases above.
for name in sorted(os.listdir(CLI_DIR)):
    if not name.endswith(".cmd") or os.path.exists(os.path.join(CLI_DIR, name[:-4] + ".rc")):
        continue
    args = open(os.path.join(CLI_DIR, name), encoding="utf-8").read().split("\n")
    low = [a.lower() for a in args]
    if "json" not in [low[i + 1] for i, a in enumerate(low[:-1]) if a == "--format"]:
        continue
    try:
        doc = json.load(open(os.path.join(CLI_DIR, name[:-4] + ".out"), encoding="utf-8"))
    except (OSError, ValueError):
        continue
    walk(doc, "", name, schema_key(args))
    check_rules(doc, name, schema_key(args))

for (cmd, path), ts in sorted(types.items()):
    real = {t: w for t, w in ts.items() if t != "null"}
    if len(real) > 1:
        fail.append(f"{cmd} {path or '(top)'}: types " + ", ".join(f"{t} ({w})" for t, w in sorted(real.items())))

for (cmd, path), ts in sorted(numbers.items()):
    if len(ts) > 1:
        fail.append(f"{cmd} {path}: integer literal ({ts['integer']}) and real number ({ts['real']})")

# The check must be able to fail: a value whose type changes is caught.
probe = {}
for v, w in ((1, "a"), ("1", "b")):
    probe.setdefault(kind(v), w)
assert len(probe) == 2
probe = {}
for t in json.loads('[1, 1.0]'):
    probe.setdefault(type(t), t)
assert len(probe) == 2

for f in fail[:200]:
    print(f)
print(f"{checked} commands run at the extremes, {len(types)} fields: {len(fail)} failure(s)")
sys.exit(1 if fail or checked < len(CASES) else 0)

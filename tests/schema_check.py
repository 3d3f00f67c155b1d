#!/usr/bin/python3
"""Every JSON golden output validates against its schema in docs/schema/ (issue 11: one schema).

usage: schema_check.py SCHEMA_DIR CLI_DIR
A case is JSON when its .cmd has --format json (any case) and it exits 0. The schema is chosen by the
command: <command>.schema.json, or table-<n> / figure-<panel> for table and figure. Also checked: every
property a schema names is snake_case, and each schema is itself a valid draft 2020-12 schema.
Exit 77 (CTest: skipped) when python3-jsonschema is missing.
"""
import json
import os
import re
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema not installed: skipped")
    sys.exit(77)

schema_dir, cli_dir = sys.argv[1], sys.argv[2]
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
fail = 0


def props(node, path):
    """Yield (path, name) of every named property in a schema."""
    if isinstance(node, dict):
        for k, v in node.get("properties", {}).items():
            yield path, k
        for k, v in node.items():
            yield from props(v, path + "/" + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from props(v, path + "/" + str(i))


schemas = {}
for name in sorted(os.listdir(schema_dir)):
    if not name.endswith(".schema.json"):
        continue
    with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    for path, prop in props(s, name):
        if not SNAKE.match(prop):
            print(f"{path}: property '{prop}' is not snake_case")
            fail = 1
    schemas[name[: -len(".schema.json")]] = s

checked = 0
for name in sorted(os.listdir(cli_dir)):
    if not name.endswith(".cmd"):
        continue
    case = os.path.join(cli_dir, name[:-4])
    with open(case + ".cmd", encoding="utf-8") as f:
        args = f.read().split("\n")
    lower = [a.lower() for a in args]
    fmt = None
    for i, a in enumerate(lower):
        if a == "--format" and i + 1 < len(lower):
            fmt = lower[i + 1]
        elif a.startswith("--format="):
            fmt = a.split("=", 1)[1]
    if fmt != "json" or os.path.exists(case + ".rc") or not os.path.exists(case + ".out"):
        continue
    cmd = args[0]
    if cmd == "table":
        key = "table-" + args[1]
    elif cmd == "figure":
        key = "figure-" + args[1]
    else:
        key = cmd
    if key not in schemas:
        print(f"{name}: no schema docs/schema/{key}.schema.json for this JSON output")
        fail = 1
        continue
    with open(case + ".out", encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except ValueError as e:
            print(f"{name}: not JSON: {e}")
            fail = 1
            continue
    errors = sorted(jsonschema.Draft202012Validator(schemas[key]).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        print(f"{name}: {'/'.join(map(str, e.path))}: {e.message[:300]}")
        fail = 1
    checked += 1

if checked < 10:
    print(f"only {checked} JSON outputs checked")
    fail = 1
print(f"{checked} JSON outputs validated against {len(schemas)} schemas")
sys.exit(fail)

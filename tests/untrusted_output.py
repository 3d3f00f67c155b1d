#!/usr/bin/env python3
"""Text on standard output (issue 15 items 5, 6, 12; docs/spec.md "Text on standard output").

usage: untrusted_output.py BINARY CONFIG_DIR

- Untrusted text (a config.json's model_type, a file name given as an argument) holding every control
  character (0x01-0x1f, 0x7f, U+0080-U+009F) and a GitHub Actions workflow command after a newline comes
  out neutralised in every format: no raw control byte but newline (and no tab), no line that begins
  (after blanks) with "::", valid UTF-8; in JSON the value decodes back to the original text.
- Long values (10,000 characters and more) of text options come out whole, or are refused with exit 2,
  one line on stderr and nothing on stdout: never cut.
- CSV and JSON output of every command is ASCII, except bytes from user text (numbers and formulas
  in particular: slope_exact is "-tau/...").
"""
import json
import os
import re
import subprocess
import sys
import tempfile

BIN, CONFIGS = sys.argv[1], sys.argv[2]
FORMATS = ("text", "markdown", "csv", "json", "latex")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(args, cwd=None):
    p = subprocess.run([BIN] + args, capture_output=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


C0 = "".join(chr(c) for c in range(1, 0x20))
C1 = "".join(chr(c) for c in range(0x80, 0xA0))
WORKFLOW = "\n::error title=injected::boom\n  ::warning::x"
RAW_CTRL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def check_neutral(what, fmt, out):
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"{what} --format {fmt}: stdout is not valid UTF-8 ({e})")
        return
    m = RAW_CTRL.search(out)
    if m:
        fail(f"{what} --format {fmt}: raw control byte {m.group(0)!r} at {m.start()}")
    if "\t" in text:
        fail(f"{what} --format {fmt}: a raw tab on stdout")
    for line in text.split("\n"):
        if line.lstrip(" \t").startswith("::"):
            fail(f"{what} --format {fmt}: a line begins with the workflow-command prefix: {line[:60]!r}")


def config_with(model_type, directory, name="config.json"):
    with open(os.path.join(CONFIGS, "mpt-7b-instruct.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["model_type"] = model_type
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f)
    return path


def commands(config):
    return [
        ["analyze", "--config", config, "--ctx", "64"],
        ["analyze", "--config", config, "--ctx", "64", "--pipeline", "eager"],
        ["check", "--config", config, "--ctx", "64"],
        ["simulate", "--config", config, "--ctx", "16", "--heads", "2"],
        ["design", "--config", config, "--ctx", "64"],
    ]


def test_neutral(tmp):
    # model_type is at most 63 bytes (longer is refused): one config per class of characters.
    kinds = {"c0": "m" + C0, "c1": "m" + C1[:16], "c1b": "m" + C1[16:], "del": "m\x7f\x1b]0;t\x07",
             "workflow": "m" + WORKFLOW}
    for kind, mt in kinds.items():
        cfg = config_with(mt, tmp, f"cfg-{kind}.json")
        for cmd in commands(cfg):
            for fmt in FORMATS:
                rc, out, err = run(cmd + ["--format", fmt])
                what = " ".join(cmd[:1] + cmd[3:]) + f" (model_type {kind})"
                if rc not in (0, 1):
                    fail(f"{what} --format {fmt}: exit {rc}: {err[:200]!r}")
                    continue
                check_neutral(what, fmt, out)
    # The same through an argument: a config file whose name holds the characters.
    name = "c" + C0.replace("/", "") + "\x7f" + C1 + WORKFLOW + ".json"
    cfg = config_with("mpt", tmp, name)
    for cmd in commands(cfg)[:3]:
        for fmt in FORMATS:
            rc, out, err = run(cmd + ["--format", fmt])
            what = cmd[0] + " --config <control characters>"
            if rc not in (0, 1):
                fail(f"{what} --format {fmt}: exit {rc}: {err[:200]!r}")
                continue
            check_neutral(what, fmt, out)
            if fmt == "json" and json.loads(out).get("config") != cfg:
                fail(f"{what} --format json: \"config\" does not decode back to the file name")
    # HTML report: escaped there already; no raw control byte either.
    rc, out, err = run(["report", "--config", cfg, "--output", "-"])
    if rc != 0:
        fail(f"report --config <control characters>: exit {rc}: {err[:200]!r}")
    else:
        check_neutral("report --config <control characters>", "html", out)
        # The page names its config file (neutralised) and model_type (issue 15 item 14).
        if b"<tr><th>model_type</th><td>mpt</td></tr>" not in out or b"<tr><th>config</th><td>" not in out:
            fail("report --config: the page does not name the config file and its model_type")


def whole_or_refused(what, value, rc, out, err):
    if rc == 2:
        if out:
            fail(f"{what}: refused, yet printed {len(out)} bytes on stdout")
        nlines = err.count(b"\n")
        if nlines != 1:
            fail(f"{what}: refused with {nlines} lines on stderr")
        return
    if rc != 0:
        fail(f"{what}: exit {rc}: {err[:200]!r}")
        return
    if value.encode() not in out:
        fail(f"{what}: the value does not come out whole")


def test_long_values(tmp):
    n = 900
    spec = "slopes:" + ",".join("0.%09d" % (100000000 + 7 * i) for i in range(n))
    assert len(spec) > 10000
    runs = [
        ["analyze", "--heads", str(n), "--ctx", "64"],
        ["analyze", "--heads", str(n), "--ctx", "64", "--pipeline", "eager"],
        ["simulate", "--heads", str(n), "--ctx", "16"],
        ["check", "--model", "bloom-7b1", "--heads", str(n), "--ctx", "64"],
    ]
    for cmd in runs:
        for fmt in ("text", "json"):
            rc, out, err = run(cmd + ["--slopes", spec, "--format", fmt, "--wide"])
            what = " ".join(cmd) + f" --slopes <{len(spec)} characters> --format {fmt}"
            whole_or_refused(what, spec, rc, out, err)
            if rc == 0 and fmt == "json":
                doc = json.loads(out)
                got = doc.get("slopes")
                if got is not None and got != spec:
                    fail(f"{what}: \"slopes\" is {len(got)} characters, not the {len(spec)} given")
    # One slope written with 10,000 digits: slope_exact shows it as written, whole (it was cut to 95 and
    # 127 bytes in the comparison and simulate reports).
    long_slope = "0.5" + "0" * 10000 + "1"
    for cmd in (["analyze", "--ctx", "64"], ["analyze", "--ctx", "64", "--pipeline", "eager"],
                ["simulate", "--ctx", "16"]):
        rc, out, err = run(cmd + ["--slopes", "slopes:" + long_slope + ",0.25", "--format", "json"])
        what = " ".join(cmd) + " --slopes slopes:<10,004-digit slope>,0.25 --format json"
        if rc != 0:
            fail(f"{what}: exit {rc}: {err[:200]!r}")
        elif json.loads(out)["heads"][0]["slope_exact"] != long_slope:
            fail(f"{what}: slope_exact is not the slope as written")
    # A pipeline spec of 10,000 characters (an exact bias-scale written with 10,000 zeros).
    pipe = "eager,bias-scale=0.125" + "0" * 10000
    for cmd in (["analyze", "--heads", "4", "--ctx", "64"], ["check", "--model", "bloom-7b1", "--ctx", "64"],
                ["simulate", "--heads", "2", "--ctx", "16"]):
        for fmt in ("text", "json"):
            rc, out, err = run(cmd + ["--pipeline", pipe, "--format", fmt])
            what = " ".join(cmd) + f" --pipeline <{len(pipe)} characters> --format {fmt}"
            if rc != 0:
                fail(f"{what}: exit {rc}: {err[:200]!r}")
            elif fmt == "text" and b"bias-scale=0.125," not in out:
                fail(f"{what}: the bias scale 0.125 does not come out")
            elif fmt == "json" and json.loads(out)["pipeline_fields"]["bias_scale"] != "0.125":
                fail(f"{what}: the bias scale 0.125 does not come out")
    # A model_type of 10,000 characters (multi-byte, so a cut could split one): refused, never cut.
    cfg = config_with("\u00e9" * 5000, tmp, "long-model-type.json")
    for cmd in commands(cfg)[:4]:
        for fmt in ("text", "json", "markdown"):
            rc, out, err = run(cmd + ["--format", fmt])
            whole_or_refused(" ".join(cmd[:1]) + f" --config <model_type of 10,000 bytes> --format {fmt}",
                             "\u00e9" * 5000, rc, out, err)


def test_ascii_machine_output():
    runs = [
        ["analyze", "--heads", "4", "--ctx", "64"],
        ["analyze", "--heads", "4", "--ctx", "64", "--mitigate", "E,L"],
        ["analyze", "--heads", "4", "--ctx", "64", "--pipeline", "eager"],
        ["analyze", "--heads", "3", "--ctx", "64", "--slopes", "geometric:128:512"],
        ["check", "--model", "bloom-7b1", "--ctx", "64"],
        ["simulate", "--heads", "4", "--ctx", "16"],
        ["design", "--heads", "4", "--ctx", "64"],
        ["thresholds"], ["table", "1"], ["table", "4"], ["table", "5"], ["table", "8"],
        ["figure", "1a"], ["figure", "1b"], ["reproduce"], ["verify"], ["models"],
    ]
    for cmd in runs:
        for fmt in ("csv", "json"):
            rc, out, err = run(cmd + ["--format", fmt])
            what = " ".join(cmd) + f" --format {fmt}"
            if rc not in (0, 1):
                fail(f"{what}: exit {rc}: {err[:200]!r}")
                continue
            m = re.search(rb"[\x80-\xff]+", out)
            if m:
                ctx = out[max(0, m.start() - 30):m.end() + 10]
                fail(f"{what}: a non-ASCII byte in machine-readable output: {ctx!r}")
    rc, out, _ = run(["analyze", "--heads", "2", "--ctx", "64", "--mitigate", "E", "--format", "json"])
    rows = json.loads(out)["heads"]
    if rows[0]["slope_exact"] != "-tau/32":
        fail(f"slope_exact in JSON is {rows[0]['slope_exact']!r}, expected '-tau/32'")


with tempfile.TemporaryDirectory() as tmp:
    test_neutral(tmp)
    test_long_values(tmp)
    test_ascii_machine_output()
print(f"untrusted output: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)

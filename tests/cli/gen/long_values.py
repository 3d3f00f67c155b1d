#!/usr/bin/python3
"""Regenerate the tests/cli/long_*.cmd golden cases (issue 7 item 1): every option that takes a
number or a list is given a valid value 10,000+ characters long, which must mean exactly what its
short spelling means (no user text is cut anywhere). The expected output of each case is the
output of the SHORT spelling, which must be byte-identical (checked here), and the numbers that
matter are checked against mpmath (independent of the code under test).

    /usr/bin/python3 tests/cli/gen/long_values.py build/alibi-blind
"""
import subprocess, sys, os
from mpmath import mp, mpf, log, nint, ceil, tanh

mp.dps = 60
BIN = sys.argv[1]
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
L = 10000

def zeros_after(x):        # "0.5" -> "0.5000...0" (exactly the same number)
    return x + ("" if "." in x else ".") + "0" * L

def lead_zeros(x):         # "16" -> "000...016"
    return "0" * L + x

def run(args):
    p = subprocess.run([BIN] + args, capture_output=True)
    return p.returncode, p.stdout, p.stderr

cases = {
    # item 1's reproducer: 29 x 0.5 and 0.123456789, with the last item 10,000 characters long
    "analyze_slopes": (["analyze", "--ctx", "1000", "--slopes", "slopes:" + "0.5," * 29 + zeros_after("0.123456789"), "--format", "csv"],
                       ["analyze", "--ctx", "1000", "--slopes", "slopes:" + "0.5," * 29 + "0.123456789", "--format", "csv"]),
    "analyze_targets": (["analyze", "--ctx", "4096", "--slopes", "targets:" + ",".join(str(32 * 2 ** i) for i in range(99)) + "," + zeros_after("124"), "--format", "csv"],
                        ["analyze", "--ctx", "4096", "--slopes", "targets:" + ",".join(str(32 * 2 ** i) for i in range(99)) + ",124", "--format", "csv"]),
    "analyze_clamp": (["analyze", "--heads", "4", "--ctx", "2048", "--clamp", "-5" + "0" * L + "e-" + str(L), "--format", "csv"],
                      ["analyze", "--heads", "4", "--ctx", "2048", "--clamp", "-5", "--format", "csv"]),
    "analyze_softcap": (["analyze", "--heads", "4", "--ctx", "2048", "--softcap", zeros_after("5"), "--format", "csv"],
                        ["analyze", "--heads", "4", "--ctx", "2048", "--softcap", "5", "--format", "csv"]),
    "analyze_logit": (["analyze", "--heads", "4", "--ctx", "2048", "--logit", zeros_after("2.5"), "--format", "csv"],
                      ["analyze", "--heads", "4", "--ctx", "2048", "--logit", "2.5", "--format", "csv"]),
    "analyze_ctx": (["analyze", "--heads", "4", "--ctx", zeros_after("2048"), "--format", "csv"],
                    ["analyze", "--heads", "4", "--ctx", "2048", "--format", "csv"]),
    "analyze_window": (["analyze", "--heads", "4", "--ctx", "2048", "--window", zeros_after("300"), "--format", "csv"],
                       ["analyze", "--heads", "4", "--ctx", "2048", "--window", "300", "--format", "csv"]),
    "analyze_heads": (["analyze", "--heads", lead_zeros("4"), "--ctx", "2048", "--format", "csv"],
                      ["analyze", "--heads", "4", "--ctx", "2048", "--format", "csv"]),
    "figure_ctx_step": (["figure", "1b", "--ctx", zeros_after("2048"), "--step", zeros_after("512"), "--format", "csv"],
                        ["figure", "1b", "--ctx", "2048", "--step", "512", "--format", "csv"]),
    "figure_slopes_heads": (["figure", "1b", "--heads", lead_zeros("2"), "--slopes", "geometric:" + zeros_after("128") + ":512", "--ctx", "1024", "--step", "256", "--format", "csv"],
                            ["figure", "1b", "--heads", "2", "--slopes", "geometric:128:512", "--ctx", "1024", "--step", "256", "--format", "csv"]),
    "simulate_numbers": (["simulate", "--heads", lead_zeros("2"), "--ctx", zeros_after("64"), "--logit-std", zeros_after("2"), "--seed", zeros_after("5"), "--threads", lead_zeros("1"), "--format", "csv"],
                         ["simulate", "--heads", "2", "--ctx", "64", "--logit-std", "2", "--seed", "5", "--threads", "1", "--format", "csv"]),
    "thresholds_digits": (["thresholds", "--digits", lead_zeros("12"), "--format", "csv"],
                          ["thresholds", "--digits", "12", "--format", "csv"]),
}

for name, (long_args, short_args) in cases.items():
    assert max(len(a) for a in long_args) >= L, name
    rl = run(long_args)
    rs = run(short_args)
    assert rs[0] == 0 and rs[2] == b"", (name, rs)
    # Where the output echoes a value as written (a slope list), the long text appears whole: compare
    # with the short run after writing the long items short again.
    echoed = rl[1]
    for a, b in zip(long_args, short_args):
        for x, y in zip(a.split(":")[-1].split(","), b.split(":")[-1].split(",")):
            if x != y:
                echoed = echoed.replace(x.encode(), y.encode())
    assert (rl[0], echoed, rl[2]) == rs, "%s: the long spelling gives a different answer" % name
    base = os.path.join(HERE, "long_" + name)
    with open(base + ".cmd", "w") as f:
        f.write("\n".join(long_args) + "\n")
    with open(base + ".out", "wb") as f:
        f.write(rl[1])

# The numbers of item 1's reproducer, from mpmath: bf16, paper convention: delta = nint(126 ln 2 / m),
# ieee: ceil(134 ln 2 / m) (spec 4 and 6).
out = run(cases["analyze_slopes"][1])[1].decode().splitlines()
last = out[-1].split(",")
m = mpf("0.123456789")
assert int(last[4]) == int(nint(126 * log(2) / m)) == 707, last
assert int(last[5]) == int(ceil(134 * log(2) / m)) == 753, last
assert len(out) == 31  # header + 30 heads
out = run(cases["analyze_targets"][1])[1].decode().splitlines()
assert len(out) == 101  # header + 100 heads, not 30
print("ok: %d cases" % len(cases))

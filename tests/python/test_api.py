"""The binding's own behaviour: exact numbers, the work budget and force, progress, dtype objects."""
import threading
from fractions import Fraction

import pytest

import alibi_blind as ab


def test_exact():
    assert ab.exact("2^-3") == Fraction(1, 8)
    assert ab.exact("3/256") == Fraction(3, 256)
    assert ab.exact("-0.0625") == Fraction(-1, 16)
    assert ab.exact(12345678901234567890123) == 12345678901234567890123
    with pytest.raises(ab.Error):
        ab.exact("2^-0.5")


def test_numbers_as_text():
    # the same logit as text, Fraction, Decimal and float: one document (the CLI's --logit 2.5)
    from decimal import Decimal
    docs = [ab.analyze(heads=4, ctx=512, logit=v) for v in ("2.5", Fraction(5, 2), Decimal("2.5"), 2.5)]
    assert all(d == docs[0] for d in docs)
    with pytest.raises(ab.Error):
        ab.analyze(heads=4, ctx=512, logit=Fraction(1, 3))


def test_budget_and_force():
    with pytest.raises(ab.Error) as e:
        ab.simulate(heads=2, ctx=2000, logit_std=1, budget=1e-6)
    assert "force=True" in str(e.value)
    assert ab.simulate(heads=2, ctx=2000, logit_std=1, budget=1e-6, force=True)["head_count"] == 2


def test_progress_reaches_total():
    seen = []
    lock = threading.Lock()

    def progress(done, total):
        with lock:
            seen.append((done, total))
    ab.simulate(heads=2, ctx=3000, logit_std=1, progress=progress)
    assert seen, "no progress report"
    # H N (N + 1) / 2 weights, the documented unit of simulate's progress
    total = 2 * 3000 * 3001 // 2
    assert seen[-1] == (total, total)
    assert all(d <= t == total for d, t in seen)


def test_dtype_objects():
    np = pytest.importorskip("numpy")
    assert ab.thresholds(dtype=np.float16) == ab.thresholds(dtype="fp16")
    torch = pytest.importorskip("torch")
    assert ab.thresholds(dtype=torch.bfloat16) == ab.thresholds(dtype="bf16")
    assert ab.thresholds(dtype=[torch.float16, "fp32"]) == ab.thresholds(dtype="fp16,fp32")


def test_error_is_valueerror_with_status():
    with pytest.raises(ValueError) as e:
        ab.simulate(heads=4, ctx=10, pipeline="nope")
    assert isinstance(e.value, ab.Error) and e.value.status != 0
    assert str(e.value).startswith("pipeline: ")


def test_types_do_not_depend_on_values():
    # issue 21: delta is an int or None, delta_exact its exact text; the steepest head's log-distance delta
    # is floor(2^(126 sqrt 2)) (d + 1 > exp(-tau/m), tau = ln 2^-126, m = 2^-0.5), computed here with mpmath
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 120
    want = int(mpmath.floor(mpmath.power(2, 126 * mpmath.sqrt(2))))
    lin = ab.analyze(heads=16, ctx=2048)
    log = ab.analyze(heads=16, ctx=2048, distance="log")
    assert lin["schema_version"] == log["schema_version"] == 2
    h = log["heads"][0]
    assert h["delta"] is None and int(h["delta_exact"]) == want
    assert isinstance(lin["heads"][0]["delta"], int) and lin["heads"][0]["delta_exact"] == str(lin["heads"][0]["delta"])
    def kind(v):   # JSON has one number type: 0 and 0.5 are both numbers (int and float in Python)
        return "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else type(v).__name__

    for a, b in zip(lin["heads"], log["heads"]):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] is None or b[k] is None or kind(a[k]) == kind(b[k]), k
    c = ab.check(model="bloom-560m", ctx=2048, max_blind_heads=16)
    assert [x["head"] for x in c["heads"]] == list(range(1, 17))   # every head, blind or not
    assert all(isinstance(x["blind"], bool) and isinstance(x["slope"], float) for x in c["heads"])
    assert isinstance(c["pipeline_fields"], dict)

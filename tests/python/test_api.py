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

"""alibi_blind: where ALiBi attention weights underflow, from Python.

The functions are the CLI's commands: keyword arguments named as the CLI's options (``heads=`` for
``--heads``, ``logit_std=`` for ``--logit-std``), and the result is the command's ``--format json``
document as plain Python objects (``json.loads`` of the same text: the library renders it). The package
has no compiled part: it loads the project's shared library (libalibi-blind) with ctypes, whose calls
release the GIL. See docs/python.md.
"""
import ctypes
import decimal
import fractions
import json
import numbers

from . import _lib

__all__ = ["Error", "thresholds", "analyze", "simulate", "predict", "check", "design", "models", "table", "reproduce", "exact",
           "dtype_name"]
__version__ = "0.2.0"


class Error(ValueError):
    """A call the library refused: the library's one-line message; ``status`` is its abl_status code."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status


# abl_status ABL_ERR_MISMATCH: simulate(compare=True) found the emulation and the predictor differ
MISMATCH = 15


def _answer(handle, keep=None):
    """The result handle's document, or Error with its message; the handle freed."""
    if not handle:
        raise MemoryError("alibi_blind: out of memory")
    try:
        st = _lib.lib.abl_flat_status(handle)
        text = _lib.lib.abl_flat_json(handle)
        if st != 0 and text is None:
            raise Error(_lib.lib.abl_flat_message(handle).decode("utf-8", "replace"), st)
        return json.loads(text.decode("utf-8"))
    finally:
        _lib.lib.abl_flat_free(handle)


def dtype_name(dtype):
    """A dtype as the library names it: a CLI name ('bf16'), a torch dtype (torch.bfloat16), a numpy or
    ml_dtypes dtype (np.float16, ml_dtypes.bfloat16) or its name."""
    if isinstance(dtype, str):
        return dtype
    text = str(dtype)
    if text.startswith("torch."):
        return text
    try:
        import numpy
        return numpy.dtype(dtype).name
    except (ImportError, TypeError):
        pass
    name = getattr(dtype, "__name__", None)
    if name:
        return name
    raise Error("dtype: %r is not a dtype" % (dtype,))


def _text(key, value):
    """A number as the exact decimal text the library parses (the CLI's argument): str, int, Decimal,
    float (its shortest repr, as typed), or a Fraction with a terminating decimal expansion."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Error("%s: %r is not a number" % (key, value))
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, numbers.Integral):
        return str(int(value)).encode()
    if isinstance(value, decimal.Decimal):
        return format(value, "f").encode()
    if isinstance(value, float):
        return repr(value).encode()
    if isinstance(value, fractions.Fraction):
        q, den = value, value.denominator
        for p in (2, 5):
            while den % p == 0:
                den //= p
        if den != 1:
            raise Error("%s: %s has no terminating decimal expansion" % (key, value))
        return format(decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator), "f").encode()
    raise Error("%s: %r is not a number" % (key, value))


def _str(value):
    return None if value is None else str(value).encode()


def _int(key, value, default=0):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        try:
            if isinstance(value, str) and value.strip().lstrip("+").isdigit():
                return int(value)
        except ValueError:
            pass
        raise Error("%s: %r is not an integer" % (key, value))
    return int(value)


def _count(key, value, low, high, default=0):
    v = _int(key, value, default)
    if value is not None and not low <= v <= high:
        raise Error("%s: %d is out of range (%d to %d)" % (key, v, low, high))
    return v


def _dtypes(dtype, default):
    """(names, is_list): a dtype, a comma list, 'all', or a sequence of dtypes."""
    if dtype is None:
        dtype = default
    if isinstance(dtype, (list, tuple)):
        return [dtype_name(d) for d in dtype], True
    text = dtype_name(dtype)
    if text.lower() == "all":
        return [], True
    if "," in text:
        parts = text.split(",")
        if any(p == "" for p in parts):
            raise Error("dtype: '%s' is not a comma-separated list of formats" % text)
        return parts, True
    return [text], False


def _names(names):
    arr = (ctypes.c_char_p * max(len(names), 1))(*[n.encode() for n in names])
    return arr


def _work(budget, force, progress):
    """The work budget (seconds; None: the CLI's minute), force, and the progress callback
    progress(done, total), called from a worker thread."""
    w = _lib.Work()
    w.budget_seconds = float(budget) if budget is not None else 0.0
    if budget is not None and not w.budget_seconds > 0:
        raise Error("budget: %r is not a positive number of seconds" % (budget,))
    w.force = 1 if force else 0
    fn = None
    if progress is not None:
        def hook(_ctx, done, total):
            try:
                progress(done, total)
            except Exception:  # a callback cannot raise through C
                pass
        fn = _lib.PROGRESS_FN(hook)
        w.progress = fn
    return w, fn


def thresholds(dtype=None, digits=10):
    """alibi-blind thresholds --dtype LIST --digits N --format json."""
    names, _ = _dtypes(dtype, "bf16,fp32")
    d = _count("digits", digits, 0, 1000, 10)
    arr = _names(names)
    return _answer(_lib.lib.abl_flat_thresholds(arr, len(names), d))


def _model_args(model, config, dtype, heads, slopes, ctx, pipeline, max_ctx=1 << 24):
    m = _lib.ModelArgs()
    m.model, m.config = _str(model), (None if config is None else str(config).encode())
    m.dtype = None if dtype is None else dtype_name(dtype).encode()
    m.heads = _count("heads", heads, 1, 65536)
    m.slopes = _str(slopes)
    m.ctx = _count("ctx", ctx, 1, max_ctx)
    m.pipeline = _str(pipeline)
    return m


_PAPER_ONLY = ("clamp", "distance", "level", "logit", "mitigate", "softcap", "window", "logit_range")


def analyze(heads=None, ctx=None, dtype=None, convention=None, window=None, slopes=None, distance=None,
            level=None, mitigate=None, logit=None, logit_range=None, clamp=None, softcap=None,
            model=None, config=None, pipeline=None, force=False, budget=None, progress=None):
    """alibi-blind analyze ... --format json: the paper's analysis of one layer (per dtype with a list); with
    model=, config= or pipeline=, the paper's delta beside the real kernel's exact answer, head by head."""
    names, is_list = _dtypes(dtype, "bf16")
    arr = _names(names)
    w, keep = _work(budget, force, progress)
    if model is not None or config is not None or pipeline is not None:
        given = dict(clamp=clamp, distance=distance, level=level, logit=logit, mitigate=mitigate, softcap=softcap,
                     window=window, logit_range=logit_range)
        for k in _PAPER_ONLY:
            if given[k] is not None:
                raise Error("%s: not with model/config/pipeline (the kernel's answer is for zero logits and linear "
                            "distances; drop %s=)" % (k, k))
        m = _model_args(model, config, None, heads, slopes, ctx, pipeline)
        n = 0 if (is_list and not names) else len(names) if (dtype is not None) else 0
        return _answer(_lib.lib.abl_flat_analyze_kernel(ctypes.byref(m), arr, n, int(is_list), _str(convention),
                                                        ctypes.byref(w)), (arr, keep))
    a = _lib.AnalyzeArgs()
    a.dtypes, a.ndtypes, a.dtype_list = arr, len(names), int(is_list)
    a.convention = _str(convention)
    a.heads = _count("heads", heads, 1, 65536)
    if ctx is None:
        raise Error("analyze: ctx= is required")
    a.ctx = _count("ctx", ctx, 1, 10 ** 18)
    a.window = _count("window", window, 1, 10 ** 18)
    a.slopes, a.distance, a.level, a.mitigate = _str(slopes), _str(distance), _str(level), _str(mitigate)
    a.logit, a.clamp, a.softcap = _text("logit", logit), _text("clamp", clamp), _text("softcap", softcap)
    if logit_range is not None:
        lo, hi = _range(logit_range)
        a.logit_lo, a.logit_hi = _text("logit_range", lo), _text("logit_range", hi)
    return _answer(_lib.lib.abl_flat_analyze(ctypes.byref(a), ctypes.byref(w)), (arr, keep))


def check(model=None, config=None, ctx=None, dtype=None, heads=None, slopes=None, pipeline=None, max_blind_heads=0,
          max_row_fraction=None, force=False, budget=None):
    """alibi-blind check ... --format json: the CI gate's verdict. The document comes back also when the model
    is over the limits (the CLI's exit status 1): its verdict says so."""
    m = _model_args(model, config, dtype, heads, slopes, ctx, pipeline)
    w, keep = _work(budget, force, None)
    k = _count("max_blind_heads", max_blind_heads, 0, 65536)
    return _answer(_lib.lib.abl_flat_check(ctypes.byref(m), k, _text("max_row_fraction", max_row_fraction),
                                           ctypes.byref(w)), keep)


def design(heads=None, ctx=None, dtype=None, pipeline=None, model=None, config=None, keep=None, slopes=None,
           targets=None, clamp=False, logit_budget=None, threads=None, upstream=None, loss_scale=None, force=False,
           budget=None, progress=None):
    """alibi-blind design ... --format json: binary32 slopes that keep every head seeing on a kernel (keep="all",
    the default), slopes= judged (the largest N each head keeps every key), targets= (first blind distances, one
    per head) placed exactly, or clamp=True for the least restrictive clamp alone; keep="gradient" with
    upstream= and loss_scale= (powers of two, or "dynamic") keeps every key's rounded gradient dS non-zero."""
    m = _model_args(model, config, dtype, heads, slopes, ctx, pipeline)
    d = _lib.DesignArgs()
    d.keep = _str(keep)
    arr = None
    if targets is not None:
        if isinstance(targets, str):
            targets = [t for t in targets.split(",")]
        vals = [_count("targets", t, 1, 1 << 24) for t in targets]
        arr = (ctypes.c_uint64 * max(len(vals), 1))(*vals)
        d.targets, d.ntargets = ctypes.cast(arr, ctypes.POINTER(ctypes.c_uint64)), len(vals)
    d.clamp_only = int(bool(clamp))
    d.logit_budget = _text("logit_budget", logit_budget)
    d.threads = _count("threads", threads, 1, 256)
    d.upstream, d.loss_scale = _text("upstream", upstream), _text("loss_scale", loss_scale)
    w, keep_alive = _work(budget, force, progress)
    return _answer(_lib.lib.abl_flat_design(ctypes.byref(m), ctypes.byref(d), ctypes.byref(w)), (arr, keep_alive))


def _range(value):
    if isinstance(value, str):
        parts = value.split(":")
        if len(parts) != 2:
            raise Error("logit_range: '%s' is not LO:HI (e.g. -10:5)" % value)
        return parts[0], parts[1]
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise Error("logit_range: %r is not (LO, HI) or 'LO:HI'" % (value,))
    return lo, hi


def simulate(heads=None, ctx=None, dtype=None, pipeline=None, slopes=None, logit_std=None, seed=None,
             threads=None, predict=False, compare=False, logits=None, logits_dtype=None, model=None, config=None,
             force=False, budget=None, progress=None):
    """alibi-blind simulate ... --format json. logits: captured scores, a numpy array or a torch tensor
    (float32, float16 or bfloat16; [H, N, N] or [N, N]), read in place when C-contiguous float32/float16."""
    a = _lib.SimulateArgs()
    a.model, a.config = _str(model), (None if config is None else str(config).encode())
    a.dtype = None if dtype is None else dtype_name(dtype).encode()
    a.pipeline = _str(pipeline)
    a.heads = _count("heads", heads, 1, 65536)
    a.ctx = _count("ctx", ctx, 1, 1 << 24)
    a.slopes = _str(slopes)
    a.logit_std = _text("logit_std", logit_std)
    a.seed = _count("seed", seed, 0, (1 << 63) - 1)
    a.threads = _count("threads", threads, 1, 256)
    a.predict, a.compare = int(bool(predict)), int(bool(compare))
    keep = None
    if logits is not None:
        from ._scores import scores
        sc, keep = scores(logits)
        a.logits = ctypes.pointer(sc)
    a.logits_dtype = None if logits_dtype is None else dtype_name(logits_dtype).encode()
    w, fn = _work(budget, force, progress)
    return _answer(_lib.lib.abl_flat_simulate(ctypes.byref(a), ctypes.byref(w)), (keep, fn))


def predict(heads=None, ctx=None, dtype=None, pipeline=None, slopes=None, threads=None, model=None, config=None,
            force=False, budget=None, progress=None):
    """alibi-blind simulate --predict ... --format json: the exact zero-logit predictor, no N x N work."""
    return simulate(heads=heads, ctx=ctx, dtype=dtype, pipeline=pipeline, slopes=slopes, threads=threads,
                    model=model, config=config, predict=True, force=force, budget=budget, progress=progress)


def models(name=None):
    """alibi-blind models [NAME] --format json: the catalogue, or one model in full."""
    return _answer(_lib.lib.abl_flat_models(_str(name)))


def table(number, dtype=None, convention=None, digits=None, exact=False, ieee=False, rn=False, force=False,
          budget=None):
    """alibi-blind table N ... --format json: the paper's Table 1, 4, 5 or 8 computed from the definitions."""
    a = _lib.TableArgs()
    a.table = _int("table", number)
    names, is_list = ([], False) if dtype is None else _dtypes(dtype, None)
    arr = _names(names)
    a.dtypes, a.ndtypes, a.dtype_list = arr, len(names), int(is_list)
    a.convention = _str(convention)
    a.digits = -1 if digits is None else _count("digits", digits, 0, 1000)
    a.exact, a.ieee, a.rn = int(bool(exact)), int(bool(ieee)), int(bool(rn))
    w, keep = _work(budget, force, None)
    return _answer(_lib.lib.abl_flat_table(ctypes.byref(a), ctypes.byref(w)), (arr, keep))


def reproduce(published=None, differences=False):
    """alibi-blind reproduce ... --format json: every computable published number of the paper, recomputed and
    compared. The document comes back also when a difference is unexplained (the CLI's exit status 1): its
    verdicts say so."""
    return _answer(_lib.lib.abl_flat_reproduce(_str(published), int(bool(differences))))


def exact(value):
    """An exact rational of a document as a fractions.Fraction: an int, a decimal or 'p/q' text, or a
    power 'b^e' with an integer exponent ('2^-3'); an irrational value ('2^-0.5') raises Error."""
    if isinstance(value, bool):
        raise Error("exact: %r is not a number" % (value,))
    if isinstance(value, numbers.Integral):
        return fractions.Fraction(int(value))
    text = str(value).strip()
    try:
        if "^" in text:
            base, exp = text.split("^", 1)
            if not exp.lstrip("+-").isdigit():
                raise ValueError(text)
            return fractions.Fraction(base) ** int(exp)
        return fractions.Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise Error("exact: %r is not an exact rational" % (value,))

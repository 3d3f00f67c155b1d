"""The shared library, loaded with ctypes, and the flat entry points' C types (include/abl/compose/flat.h)."""
import ctypes
import ctypes.util
import os

PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)


class Work(ctypes.Structure):
    _fields_ = [("budget_seconds", ctypes.c_double), ("force", ctypes.c_int),
                ("progress", PROGRESS_FN), ("progress_ctx", ctypes.c_void_p)]


class AnalyzeArgs(ctypes.Structure):
    _fields_ = [("dtypes", ctypes.POINTER(ctypes.c_char_p)), ("ndtypes", ctypes.c_size_t),
                ("dtype_list", ctypes.c_int), ("convention", ctypes.c_char_p), ("heads", ctypes.c_int),
                ("ctx", ctypes.c_uint64), ("window", ctypes.c_uint64), ("slopes", ctypes.c_char_p),
                ("distance", ctypes.c_char_p), ("level", ctypes.c_char_p), ("mitigate", ctypes.c_char_p),
                ("logit", ctypes.c_char_p), ("logit_lo", ctypes.c_char_p), ("logit_hi", ctypes.c_char_p),
                ("clamp", ctypes.c_char_p), ("softcap", ctypes.c_char_p)]


class Scores(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("itemsize", ctypes.c_int), ("ndim", ctypes.c_int),
                ("heads", ctypes.c_uint64), ("n", ctypes.c_uint64)]


class SimulateArgs(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_char_p), ("pipeline", ctypes.c_char_p), ("heads", ctypes.c_int),
                ("ctx", ctypes.c_uint64), ("slopes", ctypes.c_char_p), ("logit_std", ctypes.c_char_p),
                ("seed", ctypes.c_uint64), ("threads", ctypes.c_int), ("predict", ctypes.c_int),
                ("compare", ctypes.c_int), ("logits", ctypes.POINTER(Scores)), ("logits_dtype", ctypes.c_char_p),
                ("model", ctypes.c_char_p), ("config", ctypes.c_char_p)]


class ModelArgs(ctypes.Structure):
    _fields_ = [("model", ctypes.c_char_p), ("config", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("heads", ctypes.c_int), ("slopes", ctypes.c_char_p), ("ctx", ctypes.c_uint64),
                ("pipeline", ctypes.c_char_p)]


class DesignArgs(ctypes.Structure):
    _fields_ = [("keep", ctypes.c_char_p), ("targets", ctypes.POINTER(ctypes.c_uint64)), ("ntargets", ctypes.c_size_t),
                ("clamp_only", ctypes.c_int), ("logit_budget", ctypes.c_char_p), ("threads", ctypes.c_int),
                ("upstream", ctypes.c_char_p), ("loss_scale", ctypes.c_char_p)]


class TableArgs(ctypes.Structure):
    _fields_ = [("table", ctypes.c_int), ("dtypes", ctypes.POINTER(ctypes.c_char_p)), ("ndtypes", ctypes.c_size_t),
                ("dtype_list", ctypes.c_int), ("convention", ctypes.c_char_p), ("digits", ctypes.c_int),
                ("exact", ctypes.c_int), ("ieee", ctypes.c_int), ("rn", ctypes.c_int)]


def _candidates():
    """Where the library may be: ALIBI_BLIND_LIBRARY, the installed prefix, a build next to the checkout."""
    env = os.environ.get("ALIBI_BLIND_LIBRARY")
    if env:
        yield env
    try:
        from . import _install  # written by cmake --install
        yield _install.LIBRARY
        yield _install.SONAME
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", "libalibi-blind.so.0")
    found = ctypes.util.find_library("alibi-blind")
    if found:
        yield found
    yield "libalibi-blind.so.0"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise ImportError("alibi_blind: cannot load libalibi-blind (set ALIBI_BLIND_LIBRARY to its path): "
                      + "; ".join(errors))


lib = _load()
_R = ctypes.c_void_p
lib.abl_flat_status.argtypes = [_R]
lib.abl_flat_status.restype = ctypes.c_int
lib.abl_flat_json.argtypes = [_R]
lib.abl_flat_json.restype = ctypes.c_char_p
lib.abl_flat_message.argtypes = [_R]
lib.abl_flat_message.restype = ctypes.c_char_p
lib.abl_flat_free.argtypes = [_R]
lib.abl_flat_free.restype = None
lib.abl_flat_thresholds.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_int]
lib.abl_flat_thresholds.restype = _R
lib.abl_flat_analyze.argtypes = [ctypes.POINTER(AnalyzeArgs), ctypes.POINTER(Work)]
lib.abl_flat_analyze.restype = _R
lib.abl_flat_simulate.argtypes = [ctypes.POINTER(SimulateArgs), ctypes.POINTER(Work)]
lib.abl_flat_simulate.restype = _R
lib.abl_flat_models.argtypes = [ctypes.c_char_p]
lib.abl_flat_models.restype = _R
lib.abl_flat_table.argtypes = [ctypes.POINTER(TableArgs), ctypes.POINTER(Work)]
lib.abl_flat_table.restype = _R
lib.abl_flat_reproduce.argtypes = [ctypes.c_char_p, ctypes.c_int]
lib.abl_flat_reproduce.restype = _R
lib.abl_flat_analyze_kernel.argtypes = [ctypes.POINTER(ModelArgs), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                        ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(Work)]
lib.abl_flat_analyze_kernel.restype = _R
lib.abl_flat_check.argtypes = [ctypes.POINTER(ModelArgs), ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(Work)]
lib.abl_flat_check.restype = _R
lib.abl_flat_design.argtypes = [ctypes.POINTER(ModelArgs), ctypes.POINTER(DesignArgs), ctypes.POINTER(Work)]
lib.abl_flat_design.restype = _R

"""Captured scores from numpy or torch, handed to the library in place (no copy) when the memory allows."""
import sys

from . import _lib


def _error(msg):
    from . import Error
    return Error(msg)


def _shape(shape):
    if len(shape) == 3:
        h, n, n2 = shape
        ndim = 3
    elif len(shape) == 2:
        (n, n2), h, ndim = shape, 1, 2
    else:
        raise _error("logits: shape %s is not [H, N, N] or [N, N]" % (tuple(shape),))
    if n != n2 or n < 1 or h < 1:
        raise _error("logits: shape %s is not [H, N, N] or [N, N]" % (tuple(shape),))
    return ndim, h, n


def _torch(t):
    """A CPU float32/float16 C-contiguous tensor is read in place; bfloat16 (not a layout the reader
    takes) and any other layout go through one float32 copy (exact: every bf16 value is a float32)."""
    import torch
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.dtype not in (torch.float32, torch.float16):
        if not t.is_floating_point():
            raise _error("logits: dtype %s is not a floating-point tensor" % t.dtype)
        t = t.to(torch.float32)
    if not t.is_contiguous():
        t = t.contiguous()
    return t, t.data_ptr(), t.element_size(), tuple(t.shape)


def _numpy(a):
    import numpy as np
    a = np.asarray(a)
    if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
        raise _error("logits: dtype %s is not floating point" % a.dtype)
    if a.dtype not in (np.dtype("<f4"), np.dtype("<f2")):
        a = a.astype(np.float32)
    if not a.flags["C_CONTIGUOUS"]:
        a = np.ascontiguousarray(a)
    return a, a.ctypes.data, a.dtype.itemsize, a.shape


def scores(x):
    """(abl_flat_scores, the object that owns the memory: keep it alive during the call)."""
    if sys.byteorder != "little":
        raise _error("logits: a little-endian host is required")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        owner, ptr, itemsize, shape = _torch(x)
    else:
        owner, ptr, itemsize, shape = _numpy(x)
    ndim, h, n = _shape(shape)
    s = _lib.Scores()
    s.data, s.itemsize, s.ndim, s.heads, s.n = ptr, itemsize, ndim, h, n
    return s, owner

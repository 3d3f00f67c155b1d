"""What the PyTorch validators share (tests/torch/validate_*.py, tests/gpu/validate_gpu*.py): the reference
code's ALiBi slopes and the emulator's `simulate --weights` dump read back. Pure Python and numpy: importing it
needs no torch."""
import math
import os
import subprocess
import tempfile

import numpy as np


def press_slopes(n_heads):
    """Press et al.'s get_slopes (_get_alibi_head_slopes of JinaBERT and MosaicBERT), Python floats: for a
    head count that is not a power of two, the power of two below it and every other slope of the next one."""
    def pow2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(n_heads).is_integer():
        return pow2(n_heads)
    c = 2 ** math.floor(math.log2(n_heads))
    return pow2(c) + press_slopes(2 * c)[0::2][: n_heads - c]


def read_rows(path, heads, n, want):
    """The rows of kind `want` ("L": logits, "W": weights) of a `simulate --weights` dump as a float32 array
    [heads, n, n] (head h of the dump, 1-based, at index h - 1); entries a row does not list stay 0."""
    A = np.zeros((heads, n, n), dtype=np.uint32)
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            h, i, kind, vals = line.rstrip("\n").split(",", 3)
            if kind == want:
                row = np.array([int(t, 16) for t in vals.split()], dtype=np.uint32)
                A[int(h) - 1, int(i), : row.shape[0]] = row
    return A.view(np.float32)


def dump_rows(binary, args, heads, n):
    """The logits ("L") and weights ("W") `binary simulate --weights` writes for the layer `args` describes, as
    read_rows returns them: the inputs the independent backward checks recompute from."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "w.txt")
        subprocess.run([binary, "simulate", "--weights", dump, "--format", "json"] + args, check=True,
                       capture_output=True)
        return read_rows(dump, heads, n, "L"), read_rows(dump, heads, n, "W")

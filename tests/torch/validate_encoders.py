#!/usr/bin/python3
"""The encoder code paths in PyTorch CPU against `simulate`, `check` and `design` of a bidirectional layer.

usage: validate_encoders.py ALIBI_BLIND

Every expected count comes from PyTorch: each case builds the attention weights of every row of the N x N
matrix the way the code path does (zero q.k scores, so the weights are the bias's) and counts the exact
zeros (end row i = N - 1, middle row (N - 1) // 2, the whole matrix, the end row's first blind distance).
The tool is run on the same layer and must give the same numbers; it is never the source of an expected
value.

Code paths:
  jina-padded   JinaBERT eager (jinaai/jina-bert-implementation, as docs/pipelines.md 3d describes it): the
                Press slopes as Python floats, torch.Tensor(slopes) * -1 * |j - i| in fp32, cast to the model
                dtype with the model, added to the scores in that dtype together with the padding mask
                (1 - mask) * -10000 in the model dtype, softmax. A batch row of n real tokens padded to
                n + 37: the padded keys' weights must be exactly 0 (masked, -10000 + bias is finite in fp16:
                no inf, no NaN) and the n x n block of the real tokens must equal `simulate` at N = n.
  mosaic-torch  MosaicBERT's torch path (mosaicml/examples@daddaeff, examples/benchmarks/bert/src/
                bert_layers.py): BertEncoder.rebuild_alibi_tensor keeps self.alibi an fp32 plain attribute
                (not a buffer: the model's .to(dtype) does not cast it), slopes * -|j - i| in fp32; the
                padding mask is built in the parameters' dtype and added to the alibi: an fp32 bias. Under
                bf16 autocast the bf16 scores + the fp32 bias promote to fp32, softmax runs in fp32, and the
                P.V matmul casts P to bf16: the weights as they act are P rounded to bf16. 12 heads (the
                extra slopes of a non-power of two). Compared with the pipeline
                eager,bias-form=symmetric,bias-dtype=fp32,logit-dtype=fp32 (output dtype bf16).
  mosaic-triton MosaicBERT's Triton path (flash_attn_triton.py _fwd_kernel at the same revision) written
                again here in float32 numpy from the source: fp32 logits, 128-key blocks ascending from key
                0, P = exp(x - m) with m the larger of the block max and the running log-sum-exp, P.to(dtype)
                before P.V (tl.exp as a correctly rounded expf; the GPU's was not measured), against
                `simulate --pipeline mosaicbert-triton`, the emulation and the predictor (abl_triton_predict.c), bf16 and fp16.
  check         `check --format json` on the same layer: its heads are exactly the heads whose N x N matrix
                has a zero weight in ANY row (PyTorch), which is not always the end row (slope 0.178571433,
                N = 512, bf16: rows 1, 2, 509, 510 only).
  report        `report --model jina-embeddings-v2-base-en --ctx 512`: the page's attention row says
                bidirectional, its closed-form fractions (end row, middle row, N x N matrix) equal the ones
                computed here from delta = the nearest integer to 126 ln 2 / m (paper), and its kernel fractions and blind-head count
                equal PyTorch's zero weights (2 decimals).
  design        `design --format json` (keep all) on jina-embeddings-v2-base-en at N = 512: every designed
                slope keeps every weight of the N x N matrix in PyTorch, and the next binary32 slope above
                the steepest loses one; `design --slopes` (sees N) against PyTorch at N and N + 1.

Exit status: 0 when every case agrees, 1 otherwise, 77 when /usr/bin/python3 cannot import torch.
"""
import json
import math
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("validate_encoders: torch is not importable; skipped")
    sys.exit(77)
from alibi_reference import press_slopes   # _get_alibi_head_slopes of JinaBERT / MosaicBERT

torch.set_num_threads(2)
DT = {"bf16": torch.bfloat16, "fp16": torch.float16}


def counts(z, n):
    """(end row, middle row, matrix, end-row first blind or None) of a zero mask [n, n]."""
    end = z[n - 1]
    fb = next((d for d in range(n) if bool(end[n - 1 - d])), None)
    return (int(end.sum()), int(z[(n - 1) // 2].sum()), int(z.sum()), fb)


def jina_padded(slopes, n, dtype, pad=37):
    """JinaBERT eager with padding; returns per-head counts over the real tokens and the padded keys' check."""
    t = n + pad
    pos = torch.arange(t)
    rel = torch.abs(pos[None, :] - pos[:, None])
    alibi = (torch.Tensor(slopes)[:, None, None] * -1 * rel[None]).to(DT[dtype])
    mask = torch.cat([torch.ones(n), torch.zeros(pad)]).to(DT[dtype])
    ext = ((1.0 - mask) * -10000.0).to(DT[dtype])[None, None, :]
    scores = torch.zeros(len(slopes), t, t, dtype=DT[dtype]) + ext + alibi
    ok = bool(torch.isfinite(scores).all())
    p = F.softmax(scores.float(), dim=-1).to(DT[dtype])
    ok = ok and bool((p[:, :n, n:] == 0).all()) and not bool(torch.isnan(p).any())
    return [counts(p[h, :n, :n] == 0, n) for h in range(len(slopes))], ok


def mosaic_torch(slopes, n):
    """MosaicBERT torch path under bf16 autocast: fp32 bias, fp32 softmax, P cast to bf16 for P.V."""
    pos = torch.arange(n)
    rel = torch.abs(pos[None, :] - pos[:, None])
    alibi = torch.Tensor(slopes)[:, None, None] * -rel[None]          # fp32, never cast
    bias = torch.zeros(1, 1, 1, n, dtype=torch.float32) + alibi         # the fp32 mask (params fp32) + alibi
    scores = torch.zeros(len(slopes), n, n, dtype=torch.bfloat16) + bias[0]   # promotes to fp32
    assert scores.dtype == torch.float32
    p = F.softmax(scores, dim=-1).to(torch.bfloat16)
    return [counts(p[h] == 0, n) for h in range(len(slopes))]


def mosaic_triton(slopes, n, dtype, block=128):
    """MosaicBERT's Triton forward (flash_attn_triton.py _fwd_kernel @daddaeff) in float32 numpy, every row:
    fp32 logits (the fp32 alibi + the fp32 mask), key blocks of 128 ascending from key 0, m = max(block max,
    running lse), p = exp(x - m) (float64 exp rounded to float32: a correctly rounded expf), the block's sum in
    key order in fp32, lse = m + log(exp(lse - m) + l) in fp32, P.to(dtype); zeros = P == 0."""
    f32 = np.float32
    pos = np.arange(n)
    rel = np.abs(pos[None, :] - pos[:, None]).astype(np.float32)
    out = []
    for m_h in slopes:
        x = (np.float32(m_h) * -rel).astype(np.float32)          # fp32 product, + 0.0 mask: exact
        lse = np.full(n, -np.inf, dtype=np.float32)
        zero = np.zeros((n, n), dtype=bool)
        for lo in range(0, n, block):
            xb = x[:, lo:lo + block]
            m = np.maximum(xb.max(axis=1), lse).astype(np.float32)
            p = np.exp((xb - m[:, None]).astype(np.float32).astype(np.float64)).astype(np.float32)
            l = np.cumsum(p, axis=1, dtype=np.float32)[:, -1]
            q = torch.from_numpy(p).to(DT[dtype])
            zero[:, lo:lo + block] = (q == 0).numpy()
            with np.errstate(over="ignore"):
                a = np.exp((lse - m).astype(np.float32).astype(np.float64)).astype(np.float32)
                lse = (m + np.log((a + l).astype(np.float32).astype(np.float64)).astype(np.float32)).astype(f32)
        out.append(counts(torch.from_numpy(zero), n))
    return out


def matrix_zeros_fp32_slope(m, n, dtype):
    """Zero weights of one head (an fp32 slope) over the N x N matrix, JinaBERT eager; per row."""
    pos = torch.arange(n)
    rel = torch.abs(pos[None, :] - pos[:, None])
    alibi = (torch.tensor([m], dtype=torch.float32)[:, None, None] * -1 * rel[None]).to(DT[dtype])
    p = F.softmax(alibi.float(), dim=-1).to(DT[dtype])
    return (p[0] == 0).sum(dim=1)


def run(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError("%s: %s" % (" ".join(args), r.stderr.strip()))
    return json.loads(r.stdout)


def tool_sim(binary, pipeline, heads, n, dtype, predict):
    args = ["simulate", "--attention", "bidirectional", "--heads", str(heads), "--ctx", str(n), "--dtype", dtype,
            "--pipeline", pipeline, "--format", "json", "--threads", "2"]
    rep = run(binary, *(args + (["--predict"] if predict else [])))
    return [(h["row_zeros"], h["matrix_zeros"], h["first_blind"]) for h in rep["heads"]], rep["middle_row_zeros"]


def compare(label, want, got, mid):
    ok = all(g[0] == w[0] and g[1] == w[2] and g[2] == w[3] for g, w in zip(got, want))
    ok = ok and len(got) == len(want) and mid == sum(w[1] for w in want)
    print("%-34s end %6d mid %6d matrix %9d  %s" % (label, sum(w[0] for w in want), sum(w[1] for w in want),
                                                     sum(w[2] for w in want), "ok" if ok else "DIFFERS"))
    return ok


def code_paths(binary):
    bad = 0
    sl = press_slopes(12)
    for dtype in ("bf16", "fp16"):
        for n in (200, 512, 1000):
            want, ok = jina_padded(sl, n, dtype)
            if not ok:
                print("jina-padded %s N=%d: a padded key kept a weight or a logit is not finite" % (dtype, n))
                bad += 1
            for predict in (0, 1):
                got, mid = tool_sim(binary, "eager,bias-form=symmetric", 12, n, dtype, predict)
                bad += not compare("jina-padded %s N=%d %s" % (dtype, n, "predict" if predict else "simulate"),
                                   want, got, mid)
    for n in (200, 512, 1000):
        want = mosaic_torch(sl, n)
        for predict in (0, 1):
            got, mid = tool_sim(binary, "eager,bias-form=symmetric,bias-dtype=fp32,logit-dtype=fp32", 12, n,
                                "bf16", predict)
            bad += not compare("mosaic-torch bf16 N=%d %s" % (n, "predict" if predict else "simulate"), want, got,
                               mid)
    for dtype in ("bf16", "fp16"):
        for n in (200, 512, 1000):
            want = mosaic_triton(sl, n, dtype)
            for predict in (0, 1):
                got, mid = tool_sim(binary, "mosaicbert-triton", 12, n, dtype, predict)
                bad += not compare("mosaic-triton %s N=%d %s" % (dtype, n, "predict" if predict else "simulate"),
                                   want, got, mid)
    return bad


def check_cases(binary):
    bad = 0
    cases = [("slopes:0.178571433", 1, 512), (None, 12, 512), (None, 12, 2048)]
    for spec, heads, n in cases:
        sl = [0.178571433] if spec else [float(np.float32(s)) for s in press_slopes(heads)]
        want = [h + 1 for h, m in enumerate(sl) if int(matrix_zeros_fp32_slope(m, n, "bf16").sum()) > 0]
        args = ["check", "--model", "jina-embeddings-v2-base-en", "--ctx", str(n), "--heads", str(heads),
                "--max-blind-heads", "0", "--format", "json"]
        rep = run(binary, *(args + (["--slopes", spec] if spec else [])))
        got = [h["head"] for h in rep["heads"] if h["matrix_zeros"] > 0]
        ok = got == want and rep["blind_heads"] == len(want) and rep["verdict"] == ("fail" if want else "pass")
        print("check %-20s N=%-5d blind heads %-40s %s" % (spec or "press", n, want, "ok" if ok else "DIFFERS %s" % got))
        bad += not ok
    return bad


def design_cases(binary):
    bad = 0
    n = 512
    rep = run(binary, "design", "--model", "jina-embeddings-v2-base-en", "--ctx", str(n), "--format", "json")
    slopes = [h["slope"] for h in rep["heads"]]
    kept = all(int(matrix_zeros_fp32_slope(m, n, "bf16").sum()) == 0 for m in slopes)
    up = float(np.nextafter(np.float32(slopes[0]), np.float32(1.0)))
    steeper = int(matrix_zeros_fp32_slope(up, n, "bf16").sum())
    ok = kept and steeper > 0
    print("design keep all N=%d: every slope keeps every weight: %s; next slope up %.9g: %d zeros  %s" % (
        n, kept, up, steeper, "ok" if ok else "DIFFERS"))
    bad += not ok
    rep = run(binary, "design", "--attention", "bidirectional", "--heads", "1", "--ctx", str(n), "--slopes",
              "slopes:0.178571433", "--pipeline", "eager,bias-form=symmetric", "--format", "json")
    sees = rep["heads"][0]["sees"]
    a = int(matrix_zeros_fp32_slope(0.178571433, sees, "bf16").sum())
    b = int(matrix_zeros_fp32_slope(0.178571433, sees + 1, "bf16").sum())
    ok = a == 0 and b > 0
    print("design --slopes 0.178571433: sees N = %d; zeros at N: %d, at N + 1: %d  %s" % (sees, a, b,
                                                                                          "ok" if ok else "DIFFERS"))
    return bad + (not ok)


def page_rows(path):
    """The page's two-cell rows (<tr><th>key</th><td>value</td></tr>) as a dict."""
    import html
    import re
    text = open(path, encoding="utf-8").read()
    return {html.unescape(k): html.unescape(v) for k, v in re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td></tr>", text)}


def report_case(binary):
    """report --model jina-embeddings-v2-base-en --ctx 512: the page's bidirectional fractions against PyTorch's
    weights (the kernel's) and the closed forms computed here from delta = nearest integer of 126 ln 2 / m (bf16, paper)."""
    import tempfile
    n, heads = 512, 12
    with tempfile.TemporaryDirectory() as d:
        path = d + "/page.html"
        subprocess.run([binary, "report", "--model", "jina-embeddings-v2-base-en", "--ctx", str(n), "--output", path],
                       check=True, capture_output=True)
        rows = page_rows(path)
    sl = [float(np.float32(s)) for s in press_slopes(heads)]
    z = [matrix_zeros_fp32_slope(m, n, "bf16") for m in sl]
    kernel_matrix = sum(int(r.sum()) for r in z)
    kernel_end = sum(int(r[n - 1]) for r in z)
    kernel_mid = sum(int(r[(n - 1) // 2]) for r in z)
    kernel_heads = sum(int(r.sum()) > 0 for r in z)
    tau = 126 * math.log(2)
    deltas = [max(1, round(tau / m)) for m in press_slopes(heads)]   # the paper convention: the nearest integer
    side = lambda h, dl: max(0, h - dl + 1)
    end = sum(side(n - 1, dl) for dl in deltas)
    mid = sum(side((n - 1) // 2, dl) + side(n - 1 - (n - 1) // 2, max(dl, 1)) for dl in deltas)
    mat = sum(2 * (n - dl) * (n - dl + 1) // 2 for dl in deltas if dl < n)
    want = {
        "attention": None,
        "heads blind inside the context (δ < N)": "%d of %d" % (sum(dl < n for dl in deltas), heads),
        "row fraction (end row, i = N - 1)": "%.2f %%" % (100.0 * end / (heads * n)),
        "row fraction (middle row, i = ⌊(N - 1)/2⌋)": "%.2f %%" % (100.0 * mid / (heads * n)),
        "matrix fraction (all N × N entries)": "%.2f %%" % (100.0 * mat / (heads * n * n)),
        "heads with a zero weight through the kernel (any row of the N × N matrix)": "%d of %d" % (kernel_heads, heads),
        "end row fraction through the kernel (exact zeros)": "%.2f %%" % (100.0 * kernel_end / (heads * n)),
        "middle row fraction through the kernel (exact zeros)": "%.2f %%" % (100.0 * kernel_mid / (heads * n)),
        "matrix fraction through the kernel (exact zeros, N × N)": "%.2f %%" % (100.0 * kernel_matrix / (heads * n * n)),
    }
    bad = 0
    for k, v in want.items():
        got = rows.get(k)
        ok = got is not None and (v is None and got.startswith("bidirectional") or got == v)
        print("report %-74s %-10s %s" % (k, got, "ok" if ok else "DIFFERS (want %s)" % v))
        bad += not ok
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    bad = code_paths(binary) + check_cases(binary) + design_cases(binary) + report_case(binary)
    print("validate_encoders: %s" % ("every count agrees" if bad == 0 else "%d case(s) differ" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

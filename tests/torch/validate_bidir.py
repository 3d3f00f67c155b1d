#!/usr/bin/python3
"""Validate the bidirectional (encoder) emulation and predictor against PyTorch CPU (an optional test).

usage: validate_bidir.py ALIBI_BLIND

The encoder's eager code path, as JinaBERT (jinaai/jina-bert-implementation, JinaBertEncoder.
rebuild_alibi_tensor) and MosaicBERT (bert_layers.py, the torch path) build it: the slopes of
_get_alibi_head_slopes (Press et al., Python floats, including the extra slopes of a non-power-of-two
head count such as 12), torch.Tensor(slopes) * -1 times torch.abs(j - i) in fp32, the buffer cast to the
model dtype with the model (.half() / .to(bfloat16)), added to the (here zero) scores in that dtype, and
softmax over every key of every row. PyTorch computes every weight; the script counts its exact zeros
(end row i = N - 1, middle row i = (N - 1) // 2, the whole N x N matrix, the end row's first blind
distance) and requires `simulate --attention bidirectional` (the emulation) and `--predict` (the
predictor) to give the same numbers for every head.

Exit status: 0 when every case agrees, 1 otherwise, 77 when /usr/bin/python3 cannot import torch.
"""
import json
import re
import subprocess
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("validate_bidir: torch is not importable; skipped")
    sys.exit(77)
from alibi_reference import press_slopes

torch.set_num_threads(1)
_cap = re.search(r"CPU capability usage: (\w+)", torch.__config__.show())
LANES = "vec16" if _cap and _cap.group(1).startswith("AVX512") else "vec8"
DT = {"bf16": torch.bfloat16, "fp16": torch.float16}


alibi_head_slopes = press_slopes   # _get_alibi_head_slopes of JinaBERT / MosaicBERT


def torch_zeros(heads, n, dtype, softmax_dtype):
    """Zero weights of the encoder's softmax: (end row, middle row, matrix, end-row first blind) per head."""
    pos = torch.arange(n)
    rel = torch.abs(pos[None, :] - pos[:, None])[None, :, :].expand(heads, -1, -1)
    slopes = torch.Tensor(alibi_head_slopes(heads)) * -1
    alibi = (slopes.unsqueeze(1).unsqueeze(1) * rel).to(DT[dtype])     # the buffer, cast with the model
    scores = torch.zeros(heads, n, n, dtype=DT[dtype]) + alibi          # zero q.k, the bias added in dtype
    if softmax_dtype == "fp32":
        p = F.softmax(scores, dim=-1, dtype=torch.float32).to(DT[dtype])
    else:
        p = F.softmax(scores, dim=-1)
    z = p == 0
    mid = (n - 1) // 2
    out = []
    for h in range(heads):
        end = z[h, n - 1]
        fb = next((d for d in range(n) if end[n - 1 - d]), None)
        out.append((int(end.sum()), int(z[h, mid].sum()), int(z[h].sum()), fb))
    return out


def tool(binary, heads, n, dtype, predict):
    args = [binary, "simulate", "--attention", "bidirectional", "--heads", str(heads), "--ctx", str(n),
            "--dtype", dtype, "--pipeline", "eager,bias-form=symmetric" + ("" if predict else ",sum=" + LANES),
            "--format", "json", "--threads", "1"]
    if predict:
        args.append("--predict")
    rep = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    mid = rep["middle_row_zeros"]
    return [(h["row_zeros"], None, h["matrix_zeros"], h["first_blind"]) for h in rep["heads"]], mid


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    bad = 0
    for dtype in ("bf16", "fp16"):
        for heads, n in ((12, 64), (12, 300), (8, 777), (12, 1024)):
            want = torch_zeros(heads, n, dtype, "fp32")
            # F.softmax in the model dtype itself (JinaBERT's call): CPU torch 1.13 has it for bf16 only
            plain = torch_zeros(heads, n, dtype, "native") if dtype == "bf16" else want
            for predict in (0, 1):
                got, mid = tool(binary, heads, n, dtype, predict)
                ok = all(g[0] == w[0] and g[2] == w[2] and g[3] == w[3] for g, w in zip(got, want))
                ok = ok and mid == sum(w[1] for w in want)
                same = [w[:3] for w in want] == [q[:3] for q in plain]
                print("%s N=%-5d H=%-2d %-9s end %6d mid %6d matrix %9d  %s%s" % (
                    dtype, n, heads, "predict" if predict else "simulate", sum(w[0] for w in want),
                    sum(w[1] for w in want), sum(w[2] for w in want), "ok" if ok else "DIFFERS",
                    "" if same else " (F.softmax in the model dtype differs from the fp32 softmax)"))
                bad += not ok
    print("validate_bidir: %s" % ("every count agrees" if bad == 0 else "%d case(s) differ" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

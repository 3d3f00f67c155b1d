#!/usr/bin/python3
"""`plot blindmap` of an encoder against PyTorch CPU, cell by cell.

usage: validate_blindmap_bidir.py ALIBI_BLIND WORKDIR

jina-embeddings-v2-base-en (12 heads, bidirectional) on its default code path, JinaBERT eager (docs/pipelines.md
3d): the Press slopes as Python floats, torch.Tensor(slopes) * -|j - i| in fp32, cast to the model dtype, the
softmax in fp32 with zero scores, the weights cast back. PyTorch computes every weight of the N x N matrix; the
share of exact zeros in each cell of B x B tokens (B = 2 at N = 512, as the map bins) must equal the `value`
the map's `--data` file gives for that cell. Heads 1 and 2 in bf16, 1 and 5 in fp16 (each with zeros at N = 512). The tool is never the source of an
expected value.

Exit status: 0 when every cell agrees, 1 otherwise, 77 when /usr/bin/python3 cannot import torch.
"""
import csv
import os
import subprocess
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("validate_blindmap_bidir: torch is not importable; skipped")
    sys.exit(77)
from alibi_reference import press_slopes   # _get_alibi_head_slopes of JinaBERT

torch.set_num_threads(2)
DT = {"bf16": torch.bfloat16, "fp16": torch.float16}


def torch_shares(slope, n, dtype, b):
    """Zero shares per b x b cell of JinaBERT eager's N x N weights (zero scores): {(x, y): share}."""
    pos = torch.arange(n)
    rel = torch.abs(pos[None, :] - pos[:, None])
    alibi = (torch.Tensor([slope])[:, None, None] * -1 * rel[None]).to(DT[dtype])
    z = (F.softmax(alibi.float(), dim=-1).to(DT[dtype])[0] == 0).double()
    cells = z.reshape(n // b, b, n // b, b).mean(dim=(1, 3))
    return {(c * b, r * b): float(cells[r, c]) for r in range(n // b) for c in range(n // b)}


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    n, b, bad = 512, 2, 0
    slopes = press_slopes(12)
    for dtype, heads in (("bf16", (1, 2)), ("fp16", (1, 5))):   # heads that have zeros at N = 512
        for head in heads:
            svg, data = os.path.join(work, "enc-%s-%d.svg" % (dtype, head)), os.path.join(work, "enc.csv")
            r = subprocess.run([binary, "plot", "blindmap", "--model", "jina-embeddings-v2-base-en", "--ctx", str(n),
                                "--dtype", dtype, "--head", str(head), "--output", svg, "--data", data],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print("plot blindmap %s head %d: %s" % (dtype, head, r.stderr.strip()))
                bad += 1
                continue
            got = {(int(float(row["x"])), int(float(row["y"]))): float(row["value"])
                   for row in csv.DictReader(open(data, encoding="utf-8")) if row["element"] == "cell"}
            want = torch_shares(slopes[head - 1], n, dtype, b)
            diff = [k for k in want if got.get(k) != want[k]]
            ok = not diff and len(got) == len(want)
            print("%s head %d (m = %s): %d cells, %d with a zero, %d all zero  %s" % (
                dtype, head, slopes[head - 1], len(want), sum(v > 0 for v in want.values()),
                sum(v == 1 for v in want.values()), "ok" if ok else "DIFFERS at %s" % diff[:5]))
            bad += not ok
    print("validate_blindmap_bidir: %s" % ("every cell agrees" if bad == 0 else "%d case(s) differ" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

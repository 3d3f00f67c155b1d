"""torch tensors as logits, and alibi_blind.torch.capture_scores on an attention module built here."""
import math

import numpy as np
import pytest

import alibi_blind as ab

torch = pytest.importorskip("torch")
import alibi_blind.torch as abt  # noqa: E402


def _alibi_mask(h, n):
    """The ALiBi bias -m_h (i - j) on the causal part, -inf above it; press slopes 2^(-8(h+1)/H)."""
    m = torch.tensor([2.0 ** (-8.0 * (k + 1) / h) for k in range(h)])
    i = torch.arange(n)
    d = (i[:, None] - i[None, :]).float()
    bias = -m[:, None, None] * d
    return bias.masked_fill(d < 0, float("-inf"))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_tensor_logits_equal_npy(cli, tmp_path, dtype):
    g = torch.Generator().manual_seed(3)
    t = (torch.randn(2, 80, 80, generator=g) * 3).to(getattr(torch, dtype))
    path = tmp_path / "s.npy"
    # the file: float32 for float32 and bfloat16 (exact widening), float16 as is
    np.save(path, t.to(torch.float16 if dtype == "float16" else torch.float32).numpy())
    rc, doc, err = cli("simulate", "--logits", str(path), "--pipeline", "bloom-hf")
    assert rc == 0, err
    assert ab.simulate(logits=t, pipeline="bloom-hf") == doc


def test_tensor_in_place():
    """A C-contiguous float32 tensor is handed over by its own pointer (no copy)."""
    from alibi_blind._scores import scores
    t = torch.zeros(2, 16, 16)
    s, owner = scores(t)
    assert s.data == t.data_ptr() and owner.data_ptr() == t.data_ptr()


def test_capture_multihead_attention(cli, tmp_path):
    torch.manual_seed(0)
    h, n, e = 4, 48, 32
    mha = torch.nn.MultiheadAttention(e, h, batch_first=True)
    x = torch.randn(2, n, e)
    mask = _alibi_mask(h, n).repeat(2, 1, 1)     # [batch*H, N, N]
    with abt.capture_scores(mha) as cap:
        out, w = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
    assert len(cap.scores) == 1 and tuple(cap.scores[0].shape) == (2, h, n, n)
    # independent check: softmax(captured + bias) is the module's own attention weights
    ref = torch.softmax(cap.scores[0] + _alibi_mask(h, n), dim=-1)
    assert torch.allclose(ref, w, atol=1e-6)
    # and the hook is gone after the block
    mha(x, x, x)
    assert len(cap.scores) == 1
    s = cap.scores[0][0]
    path = tmp_path / "cap.npy"
    np.save(path, s.numpy())
    rc, doc, err = cli("simulate", "--logits", str(path))
    assert rc == 0, err
    assert ab.simulate(logits=s) == doc


def test_capture_custom_module():
    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = 2
            self.q_proj = torch.nn.Linear(8, 8)
            self.k_proj = torch.nn.Linear(8, 8)

        def forward(self, x):
            q = self.q_proj(x).unflatten(-1, (2, -1)).transpose(1, 2)
            k = self.k_proj(x).unflatten(-1, (2, -1)).transpose(1, 2)
            return q @ k.transpose(-1, -2) / math.sqrt(4)

    def fn(m, args):
        x = args[0]
        q = m.q_proj(x).unflatten(-1, (m.heads, -1)).transpose(1, 2)
        k = m.k_proj(x).unflatten(-1, (m.heads, -1)).transpose(1, 2)
        return q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5

    m = Tiny()
    x = torch.randn(1, 10, 8)
    with abt.capture_scores(m, scores=fn) as cap:
        y = m(x)
    assert torch.allclose(cap.scores[0], y.detach())
    with pytest.raises(TypeError):
        with abt.capture_scores(m):
            pass


def test_zero_counts_equal_pytorch_softmax():
    """The zero weights of captured scores through the eager bf16 pipeline are PyTorch's own: bias -m (i - j)
    in fp32 rounded to bf16, plus the scores rounded to bf16, softmax in fp32, weight rounded to bf16."""
    h, n = 8, 300
    g = torch.Generator().manual_seed(5)
    scores = torch.randn(h, n, n, generator=g) * 4
    m = torch.tensor([2.0 ** (-8.0 * (k + 1) / h) for k in range(h)]).view(h, 1, 1)
    i = torch.arange(n).view(-1, 1)
    j = torch.arange(n).view(1, n)
    bias = (-(m * (i - j).float())).to(torch.bfloat16)
    mask = j > i
    x = (scores.to(torch.bfloat16) + bias).masked_fill(mask, float("-inf"))
    w = torch.softmax(x, dim=-1, dtype=torch.float32).to(torch.bfloat16)
    want = int(((w == 0) & ~mask).sum())
    assert want > 0
    doc = ab.simulate(logits=scores, logits_dtype="bf16")
    assert doc["matrix_zeros"] == want

"""Capture the pre-bias attention scores of a PyTorch attention module, for simulate(logits=...).

Supported: torch.nn.MultiheadAttention (packed in_proj_weight or separate q/k/v projection weights,
batch_first or not), called with query, key and value as positional arguments, as every model that adds
ALiBi through attn_mask does. The scores are those the module's softmax sees before the mask (the ALiBi
bias) is added: (x W_q + b_q)(x W_k + b_k)^T / sqrt(head_dim), one [batch, H, N, N] float32 tensor per call.

Other modules: pass scores=fn, a function fn(module, args) -> [batch, H, N, N] (or [H, N, N]) tensor computed
from the module's forward arguments, e.g. for a module with q_proj/k_proj Linear layers:

    def scores(m, args):
        x = args[0]                                   # [batch, N, E]
        q = m.q_proj(x).unflatten(-1, (m.heads, -1)).transpose(1, 2)
        k = m.k_proj(x).unflatten(-1, (m.heads, -1)).transpose(1, 2)
        return q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5

Usage:

    with alibi_blind.torch.capture_scores(attn) as cap:
        model(tokens)
    alibi_blind.simulate(logits=cap.scores[0][0])     # the first call, first batch element: [H, N, N]
"""
import contextlib

import torch


def _mha_scores(m, args):
    """nn.MultiheadAttention's scores before the mask, from its forward's (query, key, value)."""
    if len(args) < 2:
        raise ValueError("capture_scores: MultiheadAttention must be called with query, key, value positional")
    query, key = args[0], args[1]
    if getattr(m, "batch_first", False):
        query, key = query.transpose(0, 1), key.transpose(0, 1)
    if query.dim() == 2:
        query, key = query.unsqueeze(1), key.unsqueeze(1)
    e, h = m.embed_dim, m.num_heads
    if m.in_proj_weight is not None:
        wq, wk = m.in_proj_weight[:e], m.in_proj_weight[e:2 * e]
    else:
        wq, wk = m.q_proj_weight, m.k_proj_weight
    bq = bk = None
    if m.in_proj_bias is not None:
        bq, bk = m.in_proj_bias[:e], m.in_proj_bias[e:2 * e]
    q = torch.nn.functional.linear(query, wq, bq)   # [N, batch, E]
    k = torch.nn.functional.linear(key, wk, bk)
    n, b = q.shape[0], q.shape[1]
    d = e // h
    q = q.reshape(n, b, h, d).permute(1, 2, 0, 3)    # [batch, H, N, d]
    k = k.reshape(k.shape[0], b, h, d).permute(1, 2, 0, 3)
    return (q / d ** 0.5) @ k.transpose(-1, -2)


class Capture:
    """What capture_scores recorded: scores, one float32 [batch, H, N, N] tensor per forward call."""

    def __init__(self):
        self.scores = []


@contextlib.contextmanager
def capture_scores(module, scores=None):
    """Record the pre-bias attention scores of every forward call of module while the block runs."""
    fn = scores
    if fn is None:
        if not isinstance(module, torch.nn.MultiheadAttention):
            raise TypeError("capture_scores: %s is not nn.MultiheadAttention; pass scores=fn(module, args) "
                            "(see alibi_blind.torch's documentation)" % type(module).__name__)
        fn = _mha_scores
    cap = Capture()

    def hook(mod, args):
        with torch.no_grad():
            s = fn(mod, args)
            if s.dim() == 3:
                s = s.unsqueeze(0)
            cap.scores.append(s.detach().to(torch.float32).cpu().contiguous())

    handle = module.register_forward_pre_hook(hook)
    try:
        yield cap
    finally:
        handle.remove()

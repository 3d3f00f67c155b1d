#!/usr/bin/env python3
"""Every catalogue entry through --model (issue 19, "Done means": --model works for every entry with a
public config). For each row of `models --format csv`: an entry with a head count is analysed by its name
and by its Hugging Face id (exit 0, the same answer, and the analysis is of as many heads as the row
lists); an entry without one is refused in one line naming --config (exit 2, nothing on stdout); well-known
models that do not use ALiBi (Falcon-7B/40B, jais-adapted, Llama, ...) are refused with the reason; and the
entries whose config.json is kept in tests/data/configs answer as that config does.
usage: catalogue_models.py BINARY"""
import csv
import io
import json
import os
import re
import subprocess
import sys


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    binary = sys.argv[1]
    rc, out, err = run(binary, "models", "--format", "csv")
    if rc != 0:
        print("models --format csv: exit %d: %s" % (rc, err))
        return 1
    rows = list(csv.DictReader(io.StringIO(out)))
    if len(rows) < 40:
        print("models: only %d rows" % len(rows))
        return 1
    # the model list is one row per model: no note or blank line among the rows, no name twice, and as many
    # rows as the JSON list has models
    names = [row["model"] for row in rows]
    if len(set(names)) != len(names) or any(not n or None in row for n, row in zip(names, rows)):
        print("models --format csv: not one row per model: %r" % names)
        return 1
    rc, jout, err = run(binary, "models", "--format", "json")
    jmodels = json.loads(jout).get("models") if rc == 0 else None
    if not isinstance(jmodels, list) or len(jmodels) != len(rows):
        print("models --format json: %s models, csv %d rows" % (len(jmodels) if isinstance(jmodels, list) else None,
                                                               len(rows)))
        return 1
    failures, usable = [], 0
    for row in rows:
        # CSV: the head count's column is head_count; a model without one has nan (numeric columns' null)
        name, hf_id, heads = row["model"], row["hf_id"], row["head_count"]
        rc, out, err = run(binary, "analyze", "--model", name, "--ctx", "1k")
        if heads == "nan":
            if rc != 2 or out != "" or "--config" not in err or err.count("\n") != 1:
                failures.append("%s (no head count): exit %d, stderr %r" % (name, rc, err))
            continue
        usable += 1
        m = re.search(r"^slopes: \S+ \((\d+) heads\)$", out, re.M)
        if rc != 0 or m is None or m.group(1) != heads:
            failures.append("%s: exit %d, slopes line %r, catalogue heads %s; %s" %
                            (name, rc, m.group(0) if m else None, heads, err.strip()))
            continue
        if hf_id:
            rc2, out2, err2 = run(binary, "analyze", "--model", hf_id, "--ctx", "1k")
            if rc2 != rc or out2 != out:
                failures.append("%s: --model %s answers differently from --model %s" % (name, hf_id, name))
    # well-known models that are not ALiBi are refused by name with the reason (docs/models.md, "Not ALiBi"):
    # the reason each expects is the one their own configs and code give (Falcon-7B/40B config.json "alibi":
    # false; jais-adapted is Llama-2 based; Llama, Mistral: rotary; SEA-LION v1: attn_config.alibi false and
    # learned position embeddings; Baichuan 7B: rotary), and a RoPE model must not be answered as the
    # nearest ALiBi name
    not_alibi = [("tiiuae/falcon-7b", "RoPE"), ("tiiuae/falcon-40b", "RoPE"), ("falcon-7b", "RoPE"),
                 ("inceptionai/jais-adapted-7b", "RoPE"), ("inceptionai/jais-adapted-70b-chat", "RoPE"),
                 ("meta-llama/Llama-2-7b-hf", "RoPE"), ("mistralai/Mistral-7B-v0.1", "RoPE"),
                 ("baichuan-inc/Baichuan2-7B-Base", "RoPE"), ("aisingapore/sealion7b", "learned position")]
    for name, why in not_alibi:
        rc, out, err = run(binary, "analyze", "--model", name, "--ctx", "1k")
        if rc != 2 or out != "" or err.count("\n") != 1 or "does not use ALiBi" not in err or why not in err:
            failures.append("%s (not ALiBi, %s): exit %d, stdout %d bytes, stderr %r" % (name, why, rc, len(out), err))
    # a catalogue entry and the model's own config.json (tests/data/configs: copies of published configs, see
    # its README) answer alike: same heads, slopes, dtype, default pipeline and kernel answer per head, at the
    # same context. This checks the catalogue's typed values against the config files, read by another path.
    configs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "configs")
    pairs = [("bloom-560m", "bloom-560m.json"), ("bloom", "bloom-176b.json"), ("falcon-rw-1b", "falcon-rw-1b.json"),
             ("falcon-rw-7b", "falcon-rw-7b.json"), ("mpt-7b-instruct", "mpt-7b-instruct.json"),
             ("baichuan2-13b-chat", "baichuan2-13b-chat.json"), ("replit-code-v1-3b", "replit-code-v1-3b.json"),
             ("jina-embeddings-v2-base-code", "jina-bert-v2-qk-post-norm.json"),
             ("refact-1.6b", "refact-1_6b-gguf.json")]
    keys = ("head", "slope_exact", "first_blind", "row_zeros", "matrix_zeros")
    for name, cfg in pairs:
        answers = []
        for args in (["--model", name], ["--config", os.path.join(configs, cfg)]):
            # the encoder config without model_type is answered causally unless told (docs/models.md)
            extra = ["--attention", "bidirectional"] if cfg.startswith("jina-bert") else []
            rc, out, err = run(binary, "analyze", *args, *extra, "--ctx", "1k", "--format", "json")
            answers.append(json.loads(out) if rc == 0 else err.strip())
        if not all(isinstance(a, dict) for a in answers):
            failures.append("%s vs %s: %r" % (name, cfg, answers))
            continue
        a, b = ([a["pipeline"], a["dtype"]] + [[h[k] for k in keys] for h in a["heads"]] for a in answers)
        if a != b:
            failures.append("%s answers differently from its config %s" % (name, cfg))
    for f in failures:
        print("FAIL:", f)
    print("%d entries, %d with a head count analysed, %d failures" % (len(rows), usable, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

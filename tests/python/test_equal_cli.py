"""The Python result equals json.loads of the CLI's --format json, case by case (issue 23)."""
import numpy as np
import pytest

import alibi_blind as ab

THRESHOLDS = [
    ({}, []),
    ({"dtype": "all"}, ["--dtype", "all"]),
    ({"dtype": "fp16", "digits": 3}, ["--dtype", "fp16", "--digits", "3"]),
    ({"dtype": ["fp8-e4m3fn", "bf16"], "digits": 20}, ["--dtype", "fp8-e4m3fn,bf16", "--digits", "20"]),
]

ANALYZE = [
    ({"heads": 16, "ctx": 2048}, ["--heads", "16", "--ctx", "2048"]),
    ({"heads": 8, "ctx": 4096, "dtype": "fp16", "convention": "ieee"},
     ["--heads", "8", "--ctx", "4096", "--dtype", "fp16", "--convention", "ieee"]),
    ({"ctx": 1000, "slopes": "slopes:0.5,0.25,0.125"}, ["--ctx", "1000", "--slopes", "slopes:0.5,0.25,0.125"]),
    ({"heads": 12, "ctx": 8192, "mitigate": "C", "clamp": -20, "level": "weight"},
     ["--heads", "12", "--ctx", "8192", "--mitigate", "C", "--clamp", "-20", "--level", "weight"]),
    ({"heads": 4, "ctx": 512, "logit": "2.5", "window": 256, "distance": "log"},
     ["--heads", "4", "--ctx", "512", "--logit", "2.5", "--window", "256", "--distance", "log"]),
    ({"heads": 16, "ctx": 2048, "logit_range": (-10, 5), "softcap": 30},
     ["--heads", "16", "--ctx", "2048", "--logit-range", "-10:5", "--softcap", "30"]),
    ({"heads": 16, "ctx": 2048, "dtype": "bf16,fp16"}, ["--heads", "16", "--ctx", "2048", "--dtype", "bf16,fp16"]),
    ({"heads": 8, "ctx": 300, "dtype": "all"}, ["--heads", "8", "--ctx", "300", "--dtype", "all"]),
]

SIMULATE = [
    ({"heads": 4, "ctx": 200}, ["--heads", "4", "--ctx", "200"]),
    ({"heads": 8, "ctx": 300, "pipeline": "bloom-hf", "dtype": "fp16"},
     ["--heads", "8", "--ctx", "300", "--pipeline", "bloom-hf", "--dtype", "fp16"]),
    ({"heads": 2, "ctx": 100, "logit_std": "1.5", "seed": 7}, ["--heads", "2", "--ctx", "100", "--logit-std", "1.5", "--seed", "7"]),
    ({"heads": 4, "ctx": 256, "pipeline": "flash2", "compare": True}, ["--heads", "4", "--ctx", "256", "--pipeline", "flash2", "--compare"]),
    ({"ctx": 128, "slopes": "slopes:1,0.5", "pipeline": "mpt", "threads": 1},
     ["--ctx", "128", "--slopes", "slopes:1,0.5", "--pipeline", "mpt", "--threads", "1"]),
    ({"heads": 16, "ctx": 100000, "predict": True}, ["--heads", "16", "--ctx", "100000", "--predict"]),
]

PREDICT = [
    ({"heads": 16, "ctx": 2048, "pipeline": "sdpa-efficient"}, ["--heads", "16", "--ctx", "2048", "--pipeline", "sdpa-efficient"]),
    ({"heads": 64, "ctx": 32768, "pipeline": "flash2", "dtype": "fp16"},
     ["--heads", "64", "--ctx", "32768", "--pipeline", "flash2", "--dtype", "fp16"]),
]

MODELS = [(None, []), ("bloom-7b1", ["bloom-7b1"]), ("mpt-7b", ["mpt-7b"])]


@pytest.mark.parametrize("kw,args", THRESHOLDS)
def test_thresholds(cli, kw, args):
    rc, doc, err = cli("thresholds", *args)
    assert rc == 0, err
    assert ab.thresholds(**kw) == doc


@pytest.mark.parametrize("kw,args", ANALYZE)
def test_analyze(cli, kw, args):
    rc, doc, err = cli("analyze", *args)
    assert rc == 0, err
    assert ab.analyze(**kw) == doc


@pytest.mark.parametrize("kw,args", SIMULATE)
def test_simulate(cli, kw, args):
    rc, doc, err = cli("simulate", *args)
    assert rc == 0, err
    assert ab.simulate(**kw) == doc


@pytest.mark.parametrize("kw,args", PREDICT)
def test_predict(cli, kw, args):
    rc, doc, err = cli("simulate", "--predict", *args)
    assert rc == 0, err
    assert ab.predict(**kw) == doc


@pytest.mark.parametrize("name,args", MODELS)
def test_models(cli, name, args):
    rc, doc, err = cli("models", *args)
    assert rc == 0, err
    assert ab.models(name) == doc


def _scores(h, n, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((h, n, n)) * 4).astype(np.float32)


@pytest.mark.parametrize("dtype,kw,args", [
    (np.float32, {}, []),
    (np.float16, {"pipeline": "bloom-hf"}, ["--pipeline", "bloom-hf"]),
    (np.float32, {"logits_dtype": "bf16", "dtype": "fp16"}, ["--logits-dtype", "bf16", "--dtype", "fp16"]),
])
def test_numpy_logits_equal_npy(cli, tmp_path, dtype, kw, args):
    """numpy logits in memory give the document of the same scores through an .npy file."""
    x = _scores(3, 96, 1).astype(dtype)
    path = tmp_path / "scores.npy"
    np.save(path, x)
    rc, doc, err = cli("simulate", "--logits", str(path), *args)
    assert rc == 0, err
    assert ab.simulate(logits=x, **kw) == doc
    # [N, N]: one matrix for every head, heads= given
    np.save(path, x[0])
    rc, doc, err = cli("simulate", "--logits", str(path), "--heads", "5", *args)
    assert rc == 0, err
    assert ab.simulate(logits=x[0], heads=5, **kw) == doc


def test_numpy_strided_copy(cli, tmp_path):
    """A transposed (not C-contiguous) array is read as its values, not its memory."""
    x = _scores(2, 64, 2)
    t = np.transpose(x, (0, 2, 1))
    path = tmp_path / "t.npy"
    np.save(path, np.ascontiguousarray(t))
    rc, doc, err = cli("simulate", "--logits", str(path))
    assert rc == 0, err
    assert ab.simulate(logits=t) == doc


def test_cli_refusals_are_errors(cli):
    for kw in ({"heads": 4, "ctx": 10, "dtype": "nope"}, {"heads": 4}, {"heads": 4, "ctx": 10, "slopes": "bogus:1"},
               {"heads": 4, "ctx": 10, "clamp": 1}, {"ctx": 10}):
        with pytest.raises(ab.Error) as e:
            ab.analyze(**kw)
        assert isinstance(e.value, ValueError)
        assert "\n" not in str(e.value) and str(e.value)


TABLE = [
    ({"number": 4}, ["4"]),
    ({"number": 4, "dtype": "all", "digits": 6, "rn": True}, ["4", "--dtype", "all", "--digits", "6", "--rn"]),
    ({"number": 8}, ["8"]),
    ({"number": 8, "exact": True, "convention": "ieee"}, ["8", "--exact", "--convention", "ieee"]),
    ({"number": 1}, ["1"]),
    ({"number": 1, "ieee": True, "dtype": "fp16"}, ["1", "--ieee", "--dtype", "fp16"]),
    ({"number": 5}, ["5"]),
]


@pytest.mark.parametrize("kw,args", TABLE)
def test_table(cli, kw, args):
    rc, doc, err = cli("table", *args)
    assert rc == 0, err
    assert ab.table(**kw) == doc


@pytest.mark.parametrize("kw,args", [({}, []), ({"differences": True}, ["--differences"])])
def test_reproduce(cli, kw, args):
    rc, doc, err = cli("reproduce", *args)
    assert rc in (0, 1), err
    assert ab.reproduce(**kw) == doc


def test_table_refusals():
    for kw in ({"number": 3}, {"number": 4, "exact": True}, {"number": 8, "rn": True}, {"number": 1, "dtype": "bf16,fp16"}):
        with pytest.raises(ab.Error):
            ab.table(**kw)


CONFIGS = __import__("os").path.join(__import__("os").path.dirname(__import__("os").path.abspath(__file__)),
                                     "..", "data", "configs")

ANALYZE_KERNEL = [
    ({"model": "bloom-7b1"}, ["--model", "bloom-7b1"]),
    ({"model": "falcon-rw-7b", "ctx": 4096}, ["--model", "falcon-rw-7b", "--ctx", "4096"]),
    ({"heads": 16, "ctx": 2048, "pipeline": "flash2"}, ["--heads", "16", "--ctx", "2048", "--pipeline", "flash2"]),
    ({"model": "mpt-7b", "dtype": "bf16,fp16"}, ["--model", "mpt-7b", "--dtype", "bf16,fp16"]),
    ({"model": "bloom-560m", "convention": "ieee", "heads": 8, "pipeline": "eager"},
     ["--model", "bloom-560m", "--convention", "ieee", "--heads", "8", "--pipeline", "eager"]),
    ({"config": "baichuan2-13b-chat.json", "ctx": 8192}, ["--config", "baichuan2-13b-chat.json", "--ctx", "8192"]),
]

CHECK = [
    ({"model": "bloom-7b1", "ctx": 4096}, ["--model", "bloom-7b1", "--ctx", "4096"]),
    ({"model": "mpt-7b", "max_blind_heads": 40, "max_row_fraction": "0.9"},
     ["--model", "mpt-7b", "--max-blind-heads", "40", "--max-row-fraction", "0.9"]),
    ({"config": "baichuan2-13b-chat.json", "ctx": 32768, "max_blind_heads": 4},
     ["--config", "baichuan2-13b-chat.json", "--ctx", "32768", "--max-blind-heads", "4"]),
    ({"model": "falcon-rw-7b", "ctx": 2048, "pipeline": "flash2", "dtype": "fp16"},
     ["--model", "falcon-rw-7b", "--ctx", "2048", "--pipeline", "flash2", "--dtype", "fp16"]),
]

SIMULATE_MODEL = [
    ({"model": "bloom-560m", "ctx": 400}, ["--model", "bloom-560m", "--ctx", "400"]),
    ({"model": "mpt-7b", "ctx": 256, "heads": 8, "predict": True}, ["--model", "mpt-7b", "--ctx", "256", "--heads", "8", "--predict"]),
]


def _config_path(kw, args):
    import os
    kw = dict(kw)
    args = list(args)
    if "config" in kw:
        kw["config"] = os.path.join(CONFIGS, kw["config"])
        args[args.index("--config") + 1] = kw["config"]
    return kw, args


@pytest.mark.parametrize("kw,args", ANALYZE_KERNEL)
def test_analyze_kernel(cli, kw, args):
    kw, args = _config_path(kw, args)
    rc, doc, err = cli("analyze", *args)
    assert rc == 0, err
    assert ab.analyze(**kw) == doc


@pytest.mark.parametrize("kw,args", CHECK)
def test_check(cli, kw, args):
    kw, args = _config_path(kw, args)
    rc, doc, err = cli("check", *args)
    assert rc in (0, 1), err
    assert ab.check(**kw) == doc


@pytest.mark.parametrize("kw,args", SIMULATE_MODEL)
def test_simulate_model(cli, kw, args):
    rc, doc, err = cli("simulate", *args)
    assert rc == 0, err
    assert ab.simulate(**kw) == doc


def test_numpy_in_place():
    """C-contiguous float32/float16 arrays are handed over by their own memory (no copy); others are copied."""
    from alibi_blind._scores import scores
    for dt in (np.float32, np.float16):
        x = np.zeros((2, 8, 8), dtype=dt)
        s, owner = scores(x)
        assert s.data == x.ctypes.data and s.itemsize == x.itemsize
    t = np.zeros((2, 8, 8), dtype=np.float32).transpose(0, 2, 1)
    s, owner = scores(t)
    assert s.data != t.ctypes.data and owner.flags["C_CONTIGUOUS"]


DESIGN = [
    ({"heads": 8, "ctx": 2048}, ["--heads", "8", "--ctx", "2048"]),
    ({"heads": 4, "ctx": 4096, "dtype": "fp16", "pipeline": "flash2"},
     ["--heads", "4", "--ctx", "4096", "--dtype", "fp16", "--pipeline", "flash2"]),
    ({"ctx": 1024, "targets": [100, 300, 900]}, ["--ctx", "1024", "--targets", "100,300,900"]),
    ({"heads": 8, "ctx": 4096, "slopes": "press"}, ["--heads", "8", "--ctx", "4096", "--slopes", "press"]),
    ({"heads": 8, "ctx": 2048, "clamp": True}, ["--heads", "8", "--ctx", "2048", "--clamp"]),
    ({"heads": 4, "ctx": 1024, "logit_budget": "-2", "keep": "all"},
     ["--heads", "4", "--ctx", "1024", "--logit-budget", "-2", "--keep", "all"]),
    ({"model": "bloom-560m", "ctx": 2048}, ["--model", "bloom-560m", "--ctx", "2048"]),
    ({"model": "jina-embeddings-v2-base-en", "ctx": 512}, ["--model", "jina-embeddings-v2-base-en", "--ctx", "512"]),
    ({"heads": 16, "ctx": 4096, "pipeline": "llamacpp-cpu"}, ["--heads", "16", "--ctx", "4096", "--pipeline", "llamacpp-cpu"]),
    ({"heads": 8, "ctx": 2048, "keep": "gradient", "loss_scale": "2^16"},
     ["--heads", "8", "--ctx", "2048", "--keep", "gradient", "--loss-scale", "2^16"]),
    ({"heads": 4, "ctx": 1024, "keep": "gradient", "dtype": "fp16", "upstream": "0.5", "loss_scale": "dynamic"},
     ["--heads", "4", "--ctx", "1024", "--keep", "gradient", "--dtype", "fp16", "--upstream", "0.5",
      "--loss-scale", "dynamic"]),
    ({"heads": 4, "ctx": 1024, "keep": "gradient", "pipeline": "flash2"},
     ["--heads", "4", "--ctx", "1024", "--keep", "gradient", "--pipeline", "flash2"]),
]


@pytest.mark.parametrize("kw,args", DESIGN)
def test_design(cli, kw, args):
    rc, doc, err = cli("design", *args)
    assert rc == 0, err
    assert ab.design(**kw) == doc


@pytest.mark.parametrize("kw,cli_args", [
    ({"ctx": 2048}, ["--ctx", "2048"]),
    ({"heads": 8, "ctx": 2048, "keep": "some"}, ["--heads", "8", "--ctx", "2048", "--keep", "some"]),
    ({"heads": 2, "ctx": 2048, "targets": [5, 9000]}, ["--heads", "2", "--ctx", "2048", "--targets", "5,9000"]),
    ({"heads": 8, "ctx": 2048, "keep": "gradient", "pipeline": "flash2,splits=2"},
     ["--heads", "8", "--ctx", "2048", "--keep", "gradient", "--pipeline", "flash2,splits=2"]),
    ({"heads": 8, "ctx": 2048, "loss_scale": 4}, ["--heads", "8", "--ctx", "2048", "--loss-scale", "4"]),
    ({"model": "jina-embeddings-v2-base-en", "ctx": 512, "clamp": True},
     ["--model", "jina-embeddings-v2-base-en", "--ctx", "512", "--clamp"]),
])
def test_design_refusals(cli, kw, cli_args):
    """What the CLI refuses with exit 2, design() refuses with alibi_blind.Error."""
    rc, _, _ = cli("design", *cli_args)
    assert rc == 2
    with pytest.raises(ab.Error):
        ab.design(**kw)

#!/usr/bin/env python3
"""The pictures as files: plot_files.py BINARY WORKDIR

For every plot kind and format: the file exists, starts with the format's magic bytes, has a
plausible size, PNGs have the size asked for, SVGs parse as XML and hold one <polyline> per series
in the series' colour (plus one legend sample each), and two runs give the same bytes. Failures
leave no file behind. Standard library only."""
import csv
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

BIN, WORK = sys.argv[1], sys.argv[2]
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "configs")
os.makedirs(WORK, exist_ok=True)
failures = []

# Colours the renderer uses for everything that is not a series (text and frame, grid, τ, bands).
# Greys (bands, grid) and the blindmap's four shades are not series either.
NON_SERIES = {"#D55E00"}
MAP_SHADES = {"#C6DBEF", "#6BAED6", "#2171B5", "#08306B"}


def is_series_colour(c):
    return len(c) == 7 and c not in NON_SERIES and c not in MAP_SHADES and not (c[1:3] == c[3:5] == c[5:7])


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(args):
    p = subprocess.run([BIN] + args, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def series_colours(svg_bytes):
    """Stroke colour -> number of <polyline> elements drawn in it."""
    root = ET.fromstring(svg_bytes)
    counts = {}
    for el in root.iter("{http://www.w3.org/2000/svg}polyline"):
        c = el.get("stroke", "").upper()
        counts[c] = counts.get(c, 0) + 1
    return counts


def check(kind, args, series, size=(1200, 800)):
    """series: the number of series the picture draws (None: do not count)."""
    for ext in ("png", "svg", "pdf"):
        out = os.path.join(WORK, "%s.%s" % (kind, ext))
        again = os.path.join(WORK, "%s.again.%s" % (kind, ext))
        for f in (out, again):
            if os.path.exists(f):
                os.remove(f)
        extra = ["--width", str(size[0]), "--height", str(size[1])] if size != (1200, 800) else []
        rc, so, se = run(["plot", kind] + args + extra + ["--output", out])
        if rc != 0 or so or se:
            fail("%s %s: exit %d, stdout %r, stderr %r" % (kind, ext, rc, so[:200], se[:200]))
            continue
        if not os.path.exists(out):
            fail("%s %s: no file" % (kind, ext))
            continue
        data = open(out, "rb").read()
        if len(data) < 2000:
            fail("%s %s: only %d bytes" % (kind, ext, len(data)))
        if ext == "png":
            if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
                fail("%s png: bad signature" % kind)
            else:
                w, h = struct.unpack(">II", data[16:24])
                if (w, h) != size:
                    fail("%s png: %dx%d, asked %dx%d" % (kind, w, h, size[0], size[1]))
        elif ext == "svg":
            try:
                colours = series_colours(data)
            except ET.ParseError as e:
                fail("%s svg: not XML: %s" % (kind, e))
                colours = None
            if colours is not None and kind == "blindmap" and not any(c in MAP_SHADES for c in colours):
                fail("blindmap svg: no shaded cells")
            if colours is not None:
                colours = {c: n for c, n in colours.items() if is_series_colour(c)}
            if colours is not None and series is not None:
                # One path per series and one legend sample per series.
                if len(colours) != series or any(n != 2 for n in colours.values()):
                    fail("%s svg: expected %d series colours with 2 polylines each, got %s" % (kind, series, colours))
        else:
            if data[:5] != b"%PDF-" or b"%%EOF" not in data[-32:]:
                fail("%s pdf: bad header or trailer" % kind)
        # The same bytes on a second run.
        rc, _, _ = run(["plot", kind] + args + extra + ["--output", again])
        if rc != 0 or open(again, "rb").read() != data:
            fail("%s %s: a second run gives other bytes" % (kind, ext))


check("bias", ["--heads", "16"], 16)
check("bias", ["--heads", "24", "--dtype", "fp16", "--convention", "ieee"], 24, size=(900, 700))
check("bias", ["--slopes", "slopes:0.5,0.25,0.125"], 3)
check("bias", ["--model", "bloom-560m"], 16)                     # the catalogue's 16 heads
check("bias", ["--config", os.path.join(CONFIGS, "bloom-560m.json")], 16)  # n_head 16 from config.json
check("fraction", [], 2)                                         # row and matrix
check("fraction", ["--dtype", "bf16,fp16", "--convention", "paper,ieee"], 8)
check("fraction", ["--linear", "--ctx", "4096"], 2)
check("fraction", ["--pipeline", "eager", "--ctx", "512", "--heads", "4"], 4)
check("mitigations", [], 16)                                    # Table 8's 16 combinations
check("blindmap", ["--ctx", "256"], 0)                          # a shaded map, no series
check("blindmap", ["--ctx", "512", "--head", "0", "--heads", "4"], 0)

# Refusals: exit 2, one line on stderr, nothing on stdout, no file.
bad = [
    ["plot", "bias"],                                           # no --output
    ["plot", "bias", "--output", os.path.join(WORK, "x.jpg")],  # unknown extension
    ["plot", "bias", "--device", "gif", "--output", os.path.join(WORK, "x.png")],
    ["plot", "bias", "--width", "50", "--output", os.path.join(WORK, "x.png")],
    ["plot", "bias", "--heads", "300", "--output", os.path.join(WORK, "x.png")],
    ["plot", "bias", "--slopes", "nonsense", "--output", os.path.join(WORK, "x.png")],
    ["plot", "nosuchkind", "--output", os.path.join(WORK, "x.png")],
    ["plot", "bias", "--output", os.path.join(WORK, "no-such-dir", "x.png")],
    ["plot", "blindmap", "--ctx", "9000", "--output", os.path.join(WORK, "x.png")],
    ["plot", "blindmap", "--head", "17", "--ctx", "64", "--output", os.path.join(WORK, "x.png")],
    ["plot", "fraction", "--pipeline", "eager", "--ctx", "100000", "--output", os.path.join(WORK, "x.png")],
    ["plot", "fraction", "--pipeline", "nosuch", "--ctx", "100", "--output", os.path.join(WORK, "x.png")],
    ["plot", "mitigations", "--heads", "4", "--output", os.path.join(WORK, "x.png")],
    ["plot", "bias", "--dtype", "bf16,fp16", "--output", os.path.join(WORK, "x.png")],
    ["plot", "bias", "--model", "no-such-model", "--output", os.path.join(WORK, "x.png")],
    ["figure", "1a", "--plot", os.path.join(WORK, "x.gif")],
    ["report", "--heads", "8"],                                  # no --output
    ["report", "--model", "no-such-model", "--output", os.path.join(WORK, "x.html")],
    ["report", "--pipeline", "nosuch", "--output", os.path.join(WORK, "x.html")],
    ["report", "--heads", "0", "--output", os.path.join(WORK, "x.html")],
    ["plot", "bias", "--config", os.path.join(CONFIGS, "bad-truncated.json"), "--output", os.path.join(WORK, "x.png")],
    ["report", "--config", os.path.join(CONFIGS, "bad-heads-zero.json"), "--output", os.path.join(WORK, "x.html")],
    ["report", "--heads", "4", "--ctx", "64", "--output", os.path.join(WORK, "x.pdf")],   # not an HTML name
    ["report", "--heads", "4", "--ctx", "64", "--output", os.path.join(WORK, "x.html.png")],
    ["plot", "bias", "--output", os.path.join(WORK, "x.svg"), "--data", os.path.join(WORK, "x.svg")],
]
for args in bad:
    rc, so, se = run(args)
    if rc != 2 or so or se.count(b"\n") != 1:
        fail("%s: exit %d, stdout %r, stderr %r (want 2, nothing, one line)" % (" ".join(args[1:]), rc, so, se))
left = [f for f in os.listdir(WORK) if f.startswith("x.") or ".tmp" in f]
if left:
    fail("files left behind after failures: %s" % left)

# figure --plot: the data on stdout as before, and the picture.
fig = os.path.join(WORK, "figure1a.png")
rc, so, se = run(["figure", "1a", "--format", "csv", "--plot", fig])
if rc != 0 or not so.startswith(b"d,") and b"," not in so.split(b"\n")[0] or not os.path.exists(fig):
    fail("figure 1a --plot: exit %d, stdout %r" % (rc, so[:80]))
elif open(fig, "rb").read()[:8] != b"\x89PNG\r\n\x1a\n":
    fail("figure 1a --plot: not a PNG")

# report --config: the page, as with --model.
page = os.path.join(WORK, "report-config.html")
if os.path.exists(page):
    os.remove(page)
rc, so, se = run(["report", "--config", os.path.join(CONFIGS, "mpt-7b-instruct.json"), "--ctx", "256", "--output", page])
if rc != 0 or so or se or not os.path.exists(page) or not open(page, "rb").read(15).lower().startswith(b"<!doctype html"):
    fail("report --config: exit %d, stdout %r, stderr %r" % (rc, so[:80], se[:200]))


# ---------------------------------------------------------------- what can be read from the files (issue 21)
SVGNS = "{http://www.w3.org/2000/svg}"


def svg_of(args, name):
    out = os.path.join(WORK, name)
    rc, so, se = run(["plot"] + args + ["--output", out])
    if rc != 0:
        fail("%s: exit %d %r" % (" ".join(args), rc, se[:200]))
        return None
    return ET.parse(out).getroot()


def looks(root):
    """Series colour -> (dash patterns of its polylines, glyphs drawn in it): how a series looks apart
    from its colour."""
    out = {}
    for el in root.iter(SVGNS + "polyline"):
        c = el.get("stroke", "").upper()
        if is_series_colour(c):
            out.setdefault(c, [set(), set()])[0].add(el.get("stroke-dasharray", "solid"))
    for el in root.iter(SVGNS + "text"):
        c = el.get("fill", "").upper()
        t = "".join(el.itertext())
        if c in out and len(t) == 1:
            out[c][1].add(t)
    return out


def texts(root):
    return ["".join(el.itertext()) for el in root.iter(SVGNS + "text")]


# bf16 paper and bf16 ieee differ by more than colour: dash pattern per convention, glyph per dtype,
# open glyphs for the matrix curves: four series, four looks, each one dash pattern (one path + legend).
root = svg_of(["fraction", "--dtype", "bf16,fp16", "--convention", "paper,ieee"], "look-fraction.svg")
if root is not None:
    lk = looks(root)
    shapes = {(tuple(sorted(d)), tuple(sorted(g))) for d, g in lk.values()}
    if len(lk) != 8 or len(shapes) != 8 or any(len(d) != 1 for d, _ in lk.values()):
        fail("fraction: 8 series should look 8 ways apart from colour, got %s" % lk)
    want = ["bf16 paper: row", "bf16 ieee: matrix", "fp16 ieee: row"]
    missing = [w for w in want if w not in texts(root)]
    if missing:
        fail("fraction svg: legend entries missing: %s" % missing)
# Table 8's 16 combinations: no two share glyph and dash pattern.
root = svg_of(["mitigations"], "look-mitigations.svg")
if root is not None:
    lk = looks(root)
    shapes = {(tuple(sorted(d)), tuple(sorted(g))) for d, g in lk.values()}
    if len(lk) != 16 or len(shapes) != 16:
        fail("mitigations: 16 series should look 16 ways, got %d" % len(shapes))
    t = " ".join(texts(root))
    if "beyond binary64" not in t or "10" not in t:
        fail("mitigations: the ** region is not marked as beyond binary64")
# bias: neighbouring heads differ in dash pattern; τ and δ are legend entries (not drawn over the data).
root = svg_of(["bias", "--heads", "8"], "look-bias.svg")
if root is not None:
    lk = looks(root)
    dashes = [sorted(d)[0] for d, _ in lk.values()]
    if len(set(dashes)) != 8:
        fail("bias: 8 heads should have 8 dash patterns, got %s" % dashes)
    t = texts(root)
    if not any(x.startswith("τ = -87.3365") for x in t) or not any(x.startswith("δ:") for x in t):
        fail("bias svg: τ = -87.3365 (bf16, paper) and δ should be legend entries")
# Blind maps are square: the masked triangle spans its panel; its box's width is its height.
for args in (["blindmap", "--ctx", "256"], ["blindmap", "--ctx", "512", "--head", "0", "--heads", "6"]):
    root = svg_of(args, "look-map.svg")
    if root is None:
        continue
    boxes = []
    for el in root.iter(SVGNS + "polyline"):
        if el.get("fill", "").upper() == "#E0E0E0":
            pts = [tuple(map(float, q.split(","))) for q in el.get("points").split()]
            if len(pts) != 4 or pts[0] != pts[-1]:  # the closed triangle; the legend swatch is 4 corners
                continue
            xs, ys = [q[0] for q in pts], [q[1] for q in pts]
            boxes.append((max(xs) - min(xs), max(ys) - min(ys)))
    heads = 1 if "--head" not in args else 6
    if len(boxes) < heads or any(abs(w - h) > 0.01 * max(w, h) for w, h in boxes):
        fail("%s: masked regions %s, want %d square ones" % (" ".join(args), boxes, heads))
    t = texts(root)
    if not all(x in t for x in ("every weight zero", "no weight exactly zero", "masked (key after query)")):
        fail("%s: the map's legend is missing" % " ".join(args))

# An encoder's map (issue 19/21): jina-embeddings-v2-base-en is bidirectional, so the N x N map has no masked
# half: no grey triangle, a legend of the three shades that appear and "bidirectional: none masked", the title
# says bidirectional, and the map is square (its dark cells reach all four sides: the top-right and the
# bottom-left corners are blind). The cells' zero shares (--data) against the closed form, independent of the
# emulation: head 1 of 12 has the press slope m = 2^-1; its eager path casts -m|i-j| to bf16 and softmaxes in
# fp32, so with zero scores key j of row i weighs p = e^(-m d)/S, d = |i - j|, 1 <= S <= coth(m/2) (the
# two-sided geometric sum). bf16 rounds p to 0 iff p <= 2^-134 (half its least subnormal 2^-133). So a key is
# surely zero when m d > 134 ln 2 (d >= 187, a token's margin for the fp32 exp) and surely kept when
# m d < 134 ln 2 - ln coth(m/2) (d <= 181): cells whose distances all lie below 182 must show no zero, cells
# whose distances are all 187 or more must be all zero (a cell spans 2 x 2 tokens at N = 512).
enc_svg, enc_csv = os.path.join(WORK, "look-map-encoder.svg"), os.path.join(WORK, "look-map-encoder.csv")
rc, so, se = run(["plot", "blindmap", "--model", "jina-embeddings-v2-base-en", "--ctx", "512", "--head", "1",
                  "--output", enc_svg, "--data", enc_csv])
if rc != 0 or so or se:
    fail("plot blindmap (encoder): exit %d, stdout %r, stderr %r" % (rc, so[:200], se[:200]))
else:
    import math
    root = ET.parse(enc_svg).getroot()
    t = texts(root)
    tri = [el for el in root.iter(SVGNS + "polyline") if el.get("fill", "").upper() == "#E0E0E0"]
    if tri:
        fail("encoder blindmap: a masked (grey) region is drawn, want none")
    if not all(x in t for x in ("no weight exactly zero", "some weights zero", "every weight zero",
                                "bidirectional: none masked")) or "masked (key after query)" in t:
        fail("encoder blindmap: legend %s, want the three shades and 'bidirectional: none masked'" % t)
    if not any("bidirectional" in x and "N = 512" in x for x in t):
        fail("encoder blindmap: the title does not say bidirectional")
    dark = []
    for el in root.iter(SVGNS + "polyline"):
        if el.get("fill", "").upper() == "#08306B":
            pts = [tuple(map(float, q.split(","))) for q in el.get("points").split()]
            dark.append((min(q[0] for q in pts), max(q[0] for q in pts), min(q[1] for q in pts), max(q[1] for q in pts)))
    dark.sort()
    legend = dark.pop() if dark else None   # the legend's swatch: right of the whole map
    if legend is None or not dark or legend[0] <= max(d[1] for d in dark):
        fail("encoder blindmap: no dark cells, or the legend swatch is not right of the map")
    else:
        w = max(d[1] for d in dark) - min(d[0] for d in dark)
        h = max(d[3] for d in dark) - min(d[2] for d in dark)
        if abs(w - h) > 0.01 * max(w, h):
            fail("encoder blindmap: the map is %.1f x %.1f, want square" % (w, h))
    m, lo_keep, hi_zero, bad, upper, lower = 0.5, 181, 187, [], 0, 0
    assert m * 187 > 134 * math.log(2) + 1e-6 and m * 182 < 134 * math.log(2) - math.log(1 / math.tanh(m / 2))
    for r in csv.DictReader(open(enc_csv, encoding="utf-8")):
        x, y, v = int(float(r["x"])), int(float(r["y"])), float(r["value"])
        ds = [abs(i - j) for i in (y, y + 1) for j in (x, x + 1)]
        if max(ds) <= lo_keep and v != 0 or min(ds) >= hi_zero and v != 1:
            bad.append((x, y, v))
        if min(ds) >= hi_zero:
            upper += x > y
            lower += x < y
    if bad or upper == 0 or upper != lower:
        fail("encoder blindmap --data: %d cells against the closed form %s; blind cells above/below the diagonal "
             "%d/%d (want equal, > 0)" % (len(bad), bad[:5], upper, lower))

# --data: exactly the plotted data. Press slopes 2^-(h/2) for 16 heads (the paper's Figure 1a): each head's
# line ends at (4096, -4096·2^-(h/2)); τ = -87.3365 for bf16 in the paper's convention (paper, Table 1).
import csv
png, data = os.path.join(WORK, "data-bias.png"), os.path.join(WORK, "data-bias.csv")
rc, so, se = run(["plot", "bias", "--output", png, "--data", data])
if rc != 0 or so or se:
    fail("plot bias --data: exit %d %r" % (rc, se[:200]))
else:
    rows = list(csv.DictReader(open(data, encoding="utf-8")))
    ends = [r for r in rows if r["element"] == "series" and float(r["x"]) == 4096]
    for h, r in enumerate(ends, start=1):
        want = -4096 * 2 ** (-h / 2)
        if abs(float(r["y"]) - want) > 1e-9 * abs(want):
            fail("--data: head %d ends at %s, want %r" % (h, r["y"], want))
    if len(ends) != 16:
        fail("--data: %d line ends, want 16" % len(ends))
    tau = [r for r in rows if r["element"] == "line"]
    if len(tau) != 1 or abs(float(tau[0]["y"]) + 87.3365) > 1e-4:
        fail("--data: τ rows %s" % tau)

# plot KIND --help: each kind its own text and options.
helps = {}
for kind in ("bias", "fraction", "blindmap", "mitigations"):
    rc, so, se = run(["plot", kind, "--help"])
    helps[kind] = so.decode()
    if rc != 0 or ("Usage: alibi-blind plot %s " % kind) not in helps[kind]:
        fail("plot %s --help: exit %d, %r" % (kind, rc, so[:120]))
if len(set(helps.values())) != 4:
    fail("plot KIND --help: the same text for different kinds")
if "--head " in helps["bias"] or "--pipeline" in helps["mitigations"] or "--progress" not in helps["fraction"]:
    fail("plot KIND --help lists options the kind does not take, or misses its own")

# --progress draws a bar on stderr even when it is not a terminal; --quiet none.
for flag, want_bar in (("--progress", True), ("--quiet", False)):
    out = os.path.join(WORK, "progress.png")
    rc, so, se = run(["plot", "fraction", "--pipeline", "eager", "--ctx", "256", "--heads", "2", flag,
                      "--output", out])
    if rc != 0 or so or bool(se.strip()) != want_bar:
        fail("plot fraction %s: exit %d, stderr %r" % (flag, rc, se[:120]))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)

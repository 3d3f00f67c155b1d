/* alibi-blind: the report of a RoPE run (text, markdown, CSV, JSON: docs/schema/rope.schema.json). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "abl_internal.h"
#include "rope/abl_rope_internal.h"

/* A number's text (4 significant digits) and its JSON token (round-trip binary64). */
static abl_status cell_num(abl_report *r, double v)
{
    char *t = abl_strf("%.4g", v), *j = abl_strf("%.17g", v);
    abl_status st = t && j ? abl_report_cell(r, t, j, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    free(j);
    return st;
}

static abl_status cell_u64(abl_report *r, uint64_t v)
{
    char *t = abl_strf("%llu", (unsigned long long)v);
    abl_status st = t ? abl_report_cell(r, t, t, NULL) : ABL_ERR_NO_MEMORY;
    free(t);
    return st;
}

/* A first position, or "none" (JSON null) when no position below N passes the tolerance. */
static abl_status cell_first(abl_report *r, int64_t v)
{
    return v < 0 ? abl_report_cell(r, "none", "null", NULL) : cell_u64(r, (uint64_t)v);
}

static abl_status pair_row(abl_report *r, int i, const abl_rope_pair *p)
{
    abl_status st = abl_report_row(r);
    if (st == ABL_OK) st = cell_u64(r, (uint64_t)i);
    if (st == ABL_OK) st = cell_num(r, p->theta);
    if (st == ABL_OK) st = cell_num(r, (double)p->inv_freq);
    if (st == ABL_OK) st = cell_num(r, p->angle_err);
    if (st == ABL_OK) st = cell_u64(r, p->angle_err_at);
    if (st == ABL_OK) st = cell_num(r, p->cs_err);
    if (st == ABL_OK) st = cell_u64(r, p->cs_err_at);
    if (st == ABL_OK) st = cell_num(r, p->eff_err);
    if (st == ABL_OK) st = cell_u64(r, p->eff_err_at);
    if (st == ABL_OK) st = cell_num(r, p->tolerance);
    if (st == ABL_OK) st = cell_first(r, p->first_angle_over);
    if (st == ABL_OK) st = cell_first(r, p->first_eff_over);
    return st;
}

static void columns(abl_report *r)
{
    abl_report_column(r, "pair", "i", ABL_ALIGN_RIGHT);
    abl_report_column(r, "theta", "θ_i exact", ABL_ALIGN_RIGHT);
    abl_report_column(r, "inv_freq", "θ_i code", ABL_ALIGN_RIGHT);
    abl_report_column(r, "angle_error", "angle err", ABL_ALIGN_RIGHT);
    abl_report_column(r, "angle_error_at", "at p", ABL_ALIGN_RIGHT);
    abl_report_column(r, "cos_sin_error", "cos/sin err", ABL_ALIGN_RIGHT);
    abl_report_column(r, "cos_sin_error_at", "at p", ABL_ALIGN_RIGHT);
    abl_report_column(r, "effective_error", "eff. angle err", ABL_ALIGN_RIGHT);
    abl_report_column(r, "effective_error_at", "at p", ABL_ALIGN_RIGHT);
    abl_report_column(r, "tolerance", "tolerance", ABL_ALIGN_RIGHT);
    abl_report_column(r, "first_angle_over", "first p angle>tol", ABL_ALIGN_RIGHT);
    abl_report_column(r, "first_effective_over", "first p eff>tol", ABL_ALIGN_RIGHT);
}

static abl_status meta_text(abl_report *r, const char *key, const char *label, char *text, int as_string)
{
    if (text == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = abl_report_meta(r, key, label, text, as_string ? NULL : text);
    free(text);
    return st;
}

static abl_status summary_num(abl_report *r, const char *key, const char *label, double v, const char *unit)
{
    char *t = abl_strf("%.4g%s", v, unit), *j = abl_strf("%.17g", v);
    abl_status st = t && j ? abl_report_summary(r, key, label, t, j) : ABL_ERR_NO_MEMORY;
    free(t);
    free(j);
    return st;
}

static const char *scaling_name(abl_rope_scaling s)
{
    return s == ABL_ROPE_SCALING_LINEAR ? "linear" : s == ABL_ROPE_SCALING_DYNAMIC ? "dynamic"
         : s == ABL_ROPE_SCALING_LLAMA3 ? "llama3" : s == ABL_ROPE_SCALING_YARN ? "yarn" : s == ABL_ROPE_SCALING_LONGROPE ? "longrope" : "none";
}

/* The fp32 attention factor: 9 digits in text, its exact binary64 value (17 digits) in JSON. */
static abl_status attention_meta(abl_report *r, double v)
{
    char *t = abl_strf("%.9g", v), *j = abl_strf("%.17g", v);
    abl_status st = t && j ? abl_report_meta(r, "attention_factor", "attention factor into cos/sin (fp32)", t, j)
                           : ABL_ERR_NO_MEMORY;
    free(t);
    free(j);
    return st;
}

static abl_status metas(abl_report *r, const abl_rope_result *x)
{
    abl_status st = meta_text(r, "path", "code path", abl_strf("%s", abl_rope_path_name(x->path)), 1);
    if (st == ABL_OK) st = meta_text(r, "dtype", "model dtype", abl_strf("%s", x->dtype.name), 1);
    if (st == ABL_OK) st = meta_text(r, "table_dtype", "cos/sin applied in", abl_strf("%s", x->table.name), 1);
    if (st == ABL_OK) st = meta_text(r, "head_dim", "head dim", abl_strf("%d", x->head_dim), 0);
    if (st == ABL_OK) st = meta_text(r, "base", "base (rope_theta)", abl_strf("%.17g", x->base), 0);
    if (st == ABL_OK) st = meta_text(r, "base_fp32", "base the code raises (fp32)", abl_strf("%.9g", x->base_used), 0);
    if (st == ABL_OK) st = meta_text(r, "scaling", "scaling", abl_strf("%s", scaling_name(x->scaling)), 1);
    if (st == ABL_OK) st = meta_text(r, "factor", "factor", abl_strf("%.17g", x->scaling ? x->factor : 1.0), 0);
    if (st == ABL_OK && (x->scaling == ABL_ROPE_SCALING_YARN || x->scaling == ABL_ROPE_SCALING_LONGROPE))
        st = attention_meta(r, x->attention_factor);
    if (st == ABL_OK)
        st = meta_text(r, "cos_sin_source", "fp32 pow, cos, sin",
                       abl_strf("%s", x->torch_sleef ? "PyTorch CPU's SLEEF (AVX2), bit for bit"
                                                     : "correctly rounded (MPFR)"), 1);
    if (st == ABL_OK) st = meta_text(r, "positions", "positions", abl_strf("%llu", (unsigned long long)x->n), 0);
    if (st == ABL_OK) st = meta_text(r, "shift_delta1", "shift D1", abl_strf("%llu", (unsigned long long)x->delta1), 0);
    if (st == ABL_OK) st = meta_text(r, "shift_delta2", "shift D2", abl_strf("%llu", (unsigned long long)x->delta2), 0);
    return st;
}

static abl_status first_any(abl_report *r, const abl_rope_result *x)
{
    int64_t best = -1;
    int at = -1;
    for (int i = 0; i < x->pairs; i++)
        if (x->pair[i].first_eff_over >= 0 && (best < 0 || x->pair[i].first_eff_over < best)) {
            best = x->pair[i].first_eff_over;
            at = i;
        }
    if (best < 0)
        return abl_report_summary(r, "first_effective_over_any", "first p any pair's eff. angle > tol", "none", "null");
    char *t = abl_strf("%lld (pair %d)", (long long)best, at), *j = abl_strf("%lld", (long long)best);
    abl_status st = t && j ? abl_report_summary(r, "first_effective_over_any", "first p any pair's eff. angle > tol",
                                                t, j)
                           : ABL_ERR_NO_MEMORY;
    free(t);
    free(j);
    return st;
}

static abl_status growth(abl_report *r, const abl_rope_result *x)
{
    abl_text t = {0}, j = {0};
    abl_text_add(&j, "[");
    for (int k = 0; k < x->shift_levels; k++) {
        if (k >= 4 && (k % 2) == 0)
            abl_text_add(&t, "%s2^%d: %.3g", t.n ? ", " : "", k, x->shift_first_at_n[k]);
        abl_text_add(&j, "%s%.17g", k ? ", " : "", x->shift_first_at_n[k]);
    }
    abl_text_add(&j, "]");
    abl_status st = t.oom || j.oom ? ABL_ERR_NO_MEMORY
                                   : abl_report_summary(r, "shift_first_by_length",
                                                        "first-row shift sensitivity, max over p < N",
                                                        t.n ? abl_text_str(&t) : "(N < 16)", abl_text_str(&j));
    free(t.s);
    free(j.s);
    return st;
}

static abl_status summaries(abl_report *r, const abl_rope_result *x)
{
    double cs = 0, eff = 0, ang = 0;
    for (int i = 0; i < x->pairs; i++) {
        cs = fmax(cs, x->pair[i].cs_err);
        eff = fmax(eff, x->pair[i].eff_err);
        ang = fmax(ang, x->pair[i].angle_err);
    }
    abl_status st = summary_num(r, "angle_error_max", "largest angle error (fp32 angle vs p·θ)", ang, " rad");
    if (st == ABL_OK) st = summary_num(r, "cos_sin_error_max", "largest cos/sin error (as applied)", cs, "");
    if (st == ABL_OK) st = summary_num(r, "effective_error_max", "largest effective angle error", eff, " rad");
    if (st == ABL_OK) st = first_any(r, x);
    if (st == ABL_OK) st = summary_num(r, "logit_rotation_error_first", "logit error, key 0, rotation part (unit q, k)",
                                       x->rot_err_first, "");
    if (st == ABL_OK) st = summary_num(r, "logit_rotation_error_keys", "logit error, keys 0, 1, N/2 (unit q, k)",
                                       x->rot_err_any, "");
    if (st == ABL_OK) st = summary_num(r, "logit_rounding_bound", "plus rounding of q, k and q·k, at most",
                                       x->round_bound, "");
    if (st == ABL_OK) st = summary_num(r, "logit_error_bound", "logit error bound (unit q, k)",
                                       x->rot_err_any + x->round_bound, "");
    if (st == ABL_OK) st = summary_num(r, "shift_first", "shift sensitivity, first token's row (worst unit q, k)",
                                       x->shift_first, "");
    if (st == ABL_OK) st = summary_num(r, "shift_interior", "shift sensitivity, keys 1 and N/2", x->shift_mid, "");
    if (st == ABL_OK) st = growth(r, x);
    char *f = abl_strf("%llu", (unsigned long long)x->mpfr_fallbacks);
    if (st == ABL_OK) st = f ? abl_report_summary(r, "mpfr_fallbacks", "cos/sin decided by MPFR", f, f) : ABL_ERR_NO_MEMORY;
    free(f);
    return st;
}

static abl_status notes(abl_report *r, const abl_rope_result *x)
{
    abl_status st = abl_report_note(
        r, "Modelled from source, not measured: the code path's fp32 operations emulated one by one (docs/rope.md "
           "cites file, function and revision). cos/sin of the fp32 angle are modelled as correctly rounded fp32 "
           "(PyTorch's and libm's are within 1 ulp, not always correctly rounded; tests/torch/validate_rope.py "
           "counts the differences), then cast into the table's dtype.");
    if (st == ABL_OK)
        st = abl_report_note(
            r, "angle err: |fp32 angle - p·θ_i| exact (MPFR, 160 bits); cos/sin err: Euclidean distance of the "
               "(cos, sin) as applied from (cos, sin)(p·θ_i); eff. angle err: |atan2(sin, cos) as applied - p·θ_i|; "
               "tolerance: --tolerance, else θ_i (the angle between neighbouring positions); errors of cos/sin "
               "are certified to about 1e-15 (binary64 from the exact angle).");
    if (st == ABL_OK)
        st = abl_report_note(
            r, "Logit error for unit q, k: max over pairs of |z(p) conj(z(b)) - e^{i(p-b)θ}| (z = cos + i sin as "
               "applied) over queries p < N and keys b in {0, 1, N/2}; the rounding bound adds the rounding of the "
               "rotated q, k and of q·k (fp32 accumulation, one rounding into the dtype). Shift sensitivity: "
               "|s(p+D1, b+D1) - s(p+D2, b+D2)| for the worst unit q, k.");
    if (st == ABL_OK && x->path == ABL_ROPE_GGML_CPU)
        st = abl_report_note(r, "ggml-cpu: θ code is the angle at p = 1; the angle at p is p·ts^i formed by i fp32 "
                                "multiplications (theta *= theta_scale), so its error grows with i.");
    if (st == ABL_OK && x->path == ABL_ROPE_GGML_CPU && x->scaling == ABL_ROPE_SCALING_YARN)
        st = abl_report_note(r, "ggml-cpu yarn (llama.cpp's rope_yarn): theta_interp·(1 - ramp) + theta_extrap·ramp "
                                "with each product rounded, as a GCC build computes it (clang contracts it into an "
                                "FMA: one ulp apart on the ramp's pairs); the exact pair is scaled by 0.1 ln F + 1, "
                                "the applied one by llama.cpp's fp32 mscale (the attention factor above).");
    return st;
}

abl_status abl_rope_report(const abl_rope_result *x, abl_report **out)
{
    if (x == NULL || out == NULL || x->pair == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *r = abl_report_new("RoPE as the code computes it, against the exact rotation", "pairs");
    if (r == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = metas(r, x);
    if (st == ABL_OK) {
        columns(r);
        for (int i = 0; i < x->pairs && st == ABL_OK; i++)
            st = pair_row(r, i, &x->pair[i]);
    }
    if (st == ABL_OK) st = summaries(r, x);
    if (st == ABL_OK) st = notes(r, x);
    if (st != ABL_OK) {
        abl_report_free(r);
        return st;
    }
    *out = r;
    return ABL_OK;
}

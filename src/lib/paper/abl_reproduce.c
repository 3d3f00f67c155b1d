/* alibi-blind: reproduction of the paper's published numbers (see include/abl/reproduce.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl/paper/reproduce.h"
#include "abl/paper/paper.h"
#include "abl/analysis/analysis.h"
#include "abl/core/fraction.h"
#include "abl/core/threshold.h"
#include "abl_internal.h"
#include "analysis/abl_analysis_internal.h"

/* ---------------------------------------------------------------- documented differences */

/* Mirrored in docs/errata.md (a unit test checks that every id appears there). */
#define EL_REASON                                                                                                  \
    "E+L: slopes adapted to log distances (m = −τ/ln(δ + 1), paper §4.3) keep δ at the targets "          \
    "32…8192; the published * cannot follow from the stated formula (C and S do not change δ)"
#define EL(row, k, v) {"table8." row ".d" #k, "*", #v, EL_REASON}
#define EL_ROW(row)                                                                                                \
    EL(row, 1, 32), EL(row, 2, 64), EL(row, 3, 128), EL(row, 4, 256), EL(row, 5, 512), EL(row, 6, 1024),            \
        EL(row, 7, 2048), EL(row, 8, 4096), EL(row, 9, 8192)

#define MPT_REASON                                                                                                 \
    "MPT-7B's alibi_bias_max = 8 only sets the slopes 2^-0.25 … 2^-8 (llm-foundry gen_slopes); its bias "          \
    "−m·|i − j| has no clamp and clip_qkv = null, so δ1 = 104 and δH = 22358; †10/†2,000 fit a bias clamped at -8 " \
    "(8·2^0.25 = 9.5, 8·2^8 = 2048), which MPT does not apply"

static const abl_known_difference known[] = {
    EL_ROW("E+L"),
    EL_ROW("C+E+L"),
    EL_ROW("E+L+S"),
    EL_ROW("C+E+L+S"),
    {"table1.MPT.delta_1", "10", "104", MPT_REASON},
    {"table1.MPT.delta_H", "2000", "22358", MPT_REASON},
    {"claim.mpt_clamp", "2000", "22358", MPT_REASON},
    {"claim.explicit_target", "4096", "8192",
     "E on the paper's 9 heads doubles δ 8 times from 32: δ9 = 8192, as Table 8 prints for Explicit; "
     "δH = 4096 would need δ1 = 16 or 8 heads"},
    {"claim.tau_u_fp32_text", "-103.27", "-103.28",
     "ln(smallest fp32 subnormal) = -103.27893: the text truncates it, rounding gives -103.28 (Table 4 prints "
     "-103.2789)"},
    {"claim.tau_u_bf16_text", "-92.18", "-92.19",
     "ln(smallest bf16 subnormal) = -92.18858: the text truncates it, rounding gives -92.19 (Table 4 prints "
     "-92.1886)"},
    {"table5.Falcon-RW 7B.heads", "71", "64",
     "Falcon-RW-7B has 64 heads (config n_head = 64, and Table 1); 71 is the head count of Falcon-7B, which does not "
     "use ALiBi"},
};

size_t abl_known_difference_count(void)
{
    return sizeof known / sizeof known[0];
}

const abl_known_difference *abl_known_difference_at(size_t i)
{
    return i < abl_known_difference_count() ? &known[i] : NULL;
}

const abl_known_difference *abl_known_difference_find(const char *id)
{
    for (size_t i = 0; id != NULL && i < abl_known_difference_count(); i++)
        if (strcmp(known[i].id, id) == 0)
            return &known[i];
    return NULL;
}

/* Published items with nothing to compute (listed in the notes, not checked). */
static const struct {
    const char *id, *why;
} not_computable[] = {
    {"softcap_z", "claim softcap_z (z = 50): a design choice taken from Riviere et al., nothing to compute; "
                  "alibi-blind analyze --mitigate S shows its effect (δ between δ(-50) and δ(+50))."},
};

const char *abl_verdict_name(abl_verdict v)
{
    return v == ABL_VERDICT_MATCH ? "match" : "differs";
}

const char *abl_errata_state_name(abl_errata_state s)
{
    switch (s) {
    case ABL_ERRATA_DOCUMENTED: return "documented";
    case ABL_ERRATA_UNEXPLAINED: return "unexplained";
    case ABL_ERRATA_STALE: return "stale";
    default: return "";
    }
}

/* ---------------------------------------------------------------- the list of checks */

void abl_reproduction_free(abl_reproduction *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->count; i++) {
        abl_check *c = &r->checks[i];
        free(c->id);
        free(c->published);
        free(c->computed);
        free(c->convention);
        free(c->reason);
    }
    free(r->checks);
    free(r->source);
    for (size_t i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->notes);
    memset(r, 0, sizeof *r);
}

static abl_status add_note(abl_reproduction *r, const char *text)
{
    if (r->nnotes == r->capnotes) {
        size_t ncap = r->capnotes ? 2 * r->capnotes : 8;
        char **p = realloc(r->notes, ncap * sizeof *p);
        if (p == NULL)
            return ABL_ERR_NO_MEMORY;
        r->notes = p;
        r->capnotes = ncap;
    }
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy == NULL)
        return ABL_ERR_NO_MEMORY;
    memcpy(copy, text, n);
    r->notes[r->nnotes++] = copy;
    return ABL_OK;
}

static abl_check *new_check(abl_reproduction *r)
{
    if (r->count == r->cap) {
        size_t ncap = r->cap ? 2 * r->cap : 256;
        abl_check *p = realloc(r->checks, ncap * sizeof *p);
        if (p == NULL)
            return NULL;
        r->checks = p;
        r->cap = ncap;
    }
    abl_check *c = &r->checks[r->count++];
    memset(c, 0, sizeof *c);
    return c;
}

/*
 * Record one comparison. `equal` decides the verdict (the caller compares the way the value is
 * printed); `remark` is kept as the reason of a match or an undocumented difference.
 */
/* A check's texts, copied whole; ABL_ERR_NO_MEMORY when one could not be (the check stays in the list
 * with what it has, and abl_reproduction_free frees it). */
static abl_status check_texts(abl_check *c, const char *id, const char *published, const char *computed,
                              const char *convention)
{
    c->id = strdup(id);
    c->published = strdup(published);
    c->computed = strdup(computed);
    c->convention = strdup(convention);
    return c->id && c->published && c->computed && c->convention ? ABL_OK : ABL_ERR_NO_MEMORY;
}

/* The reason of a check whose verdict is known; the errata state and the counts follow from `k`. */
static char *check_reason(abl_reproduction *r, abl_check *c, const abl_known_difference *k, int equal,
                          const char *remark)
{
    if (equal) {
        r->matches++;
        if (k == NULL)
            return strdup(remark != NULL ? remark : "");
        c->errata = ABL_ERRATA_STALE;
        r->stale++;
        return abl_strf("documented as a difference (published %s, computed %s) but it matches now: update "
                        "docs/errata.md and the list of documented differences",
                        k->published, k->computed);
    }
    r->differences++;
    if (k != NULL && strcmp(k->published, c->published) == 0 && strcmp(k->computed, c->computed) == 0) {
        c->errata = ABL_ERRATA_DOCUMENTED;
        r->documented++;
        return strdup(k->reason);
    }
    c->errata = ABL_ERRATA_UNEXPLAINED;
    r->unexplained++;
    if (k != NULL)
        return abl_strf("documented with published %s and computed %s, now published %s and computed %s: a "
                        "changed transcription or a changed engine",
                        k->published, k->computed, c->published, c->computed);
    return abl_strf("not documented in docs/errata.md%s%s", remark ? ": " : "", remark ? remark : "");
}

/*
 * Record one comparison. `equal` decides the verdict (the caller compares the way the value is
 * printed); `remark` is kept as the reason of a match or an undocumented difference.
 */
static abl_status check_eq(abl_reproduction *r, const char *id, const char *published, const char *computed,
                           const char *convention, int equal, const char *remark)
{
    if (id == NULL || computed == NULL || convention == NULL)
        return ABL_ERR_NO_MEMORY; /* a caller's heap text could not be made */
    abl_check *c = new_check(r);
    if (c == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = check_texts(c, id, published, computed, convention);
    if (st != ABL_OK)
        return st;
    c->verdict = equal ? ABL_VERDICT_MATCH : ABL_VERDICT_DIFFERS;
    c->reason = check_reason(r, c, abl_known_difference_find(id), equal, remark);
    return c->reason != NULL ? ABL_OK : ABL_ERR_NO_MEMORY;
}

static abl_status check(abl_reproduction *r, const char *id, const char *published, const char *computed,
                        const char *convention, const char *remark)
{
    if (computed == NULL)
        return ABL_ERR_NO_MEMORY;
    return check_eq(r, id, published, computed, convention, strcmp(published, computed) == 0, remark);
}

/* Digits after the decimal point of a printed number ("-92.1886" -> 4, "36.6%" -> 1, "-87" -> 0). */
static int printed_decimals(const char *s)
{
    const char *dot = strchr(s, '.');
    if (dot == NULL)
        return 0;
    int n = 0;
    for (const char *p = dot + 1; *p >= '0' && *p <= '9'; p++)
        n++;
    return n;
}

/* A delta as the paper's tables print it, malloc'd (NULL: out of memory). */
static char *delta_string(const abl_delta *d)
{
    return abl_delta_text(d, 30);
}

/* The convention column of a check under the paper's convention, malloc'd (NULL: out of memory). */
static char *paper_convention(const char *what)
{
    return what != NULL ? abl_strf("paper (bf16, τ = -87.3365, δ nearest); %s", what) : NULL;
}

/* ---------------------------------------------------------------- Table 4 */

static abl_status check_table4(abl_reproduction *r, const abl_csv *t4)
{
    static const struct {
        const char *name;
        abl_tau_kind kind;
        const char *what;
    } names[] = {
        {"underflow", ABL_TAU_SUBNORMAL, "subnormal kind: ln(smallest subnormal)"},
        {"denorm", ABL_TAU_FTZ, "ftz kind: ln(smallest normal)"},
        {"overflow", ABL_TAU_MAX, "max kind: ln(largest finite)"},
    };
    abl_status st = ABL_OK;
    for (size_t row = 0; row < t4->rows && st == ABL_OK; row++) {
        const char *name = abl_csv_get(t4, row, "name"), *fname = abl_csv_get(t4, row, "format");
        const char *value = abl_csv_get(t4, row, "value");
        char *computed = NULL, *id = abl_strf("table4.%s.%s", fname, name), *conv = NULL;
        char *remark = NULL;
        size_t k;
        for (k = 0; k < sizeof names / sizeof names[0]; k++)
            if (strcmp(names[k].name, name) == 0)
                break;
        abl_format fmt;
        if (k == sizeof names / sizeof names[0] || abl_format_lookup(fname, &fmt) != ABL_OK) {
            st = check(r, id, value, "(nothing to compute)", "unknown threshold name or format", "no such threshold");
            free(id);
            continue;
        }
        int dec = printed_decimals(value);
        conv = abl_strf("%s, %d decimals", names[k].what, dec);
        if ((st = abl_threshold_string(&fmt, names[k].kind, dec, &computed)) != ABL_OK) {
            free(id);
            free(conv);
            break;
        }
        if (names[k].kind == ABL_TAU_SUBNORMAL) {
            char *rn = NULL;
            st = abl_threshold_string(&fmt, ABL_TAU_RN_ZERO, dec, &rn);
            if (st == ABL_OK)
                remark = abl_strf(
                    "the value is ln(smallest subnormal); exp of it is that subnormal, not 0: exp(x) is 0 (round to "
                    "nearest) only for x ≤ %s, and the paper's distance tables use τd (errata: threshold naming)",
                    rn);
            if (st == ABL_OK && remark == NULL)
                st = ABL_ERR_NO_MEMORY;
            free(rn);
        }
        if (st == ABL_OK)
            st = check(r, id, value, computed, conv,
                       remark != NULL                   ? remark
                       : names[k].kind == ABL_TAU_FTZ ? "the τ of Tables 1 and 8 and Figure 1 (convention paper)"
                                                        : "");
        free(id);
        free(conv);
        free(remark);
        free(computed);
    }
    return st;
}

/* ---------------------------------------------------------------- Table 1 and the model facts */

/* Exponent of a printed power of two ("2^-0.50" -> -1/2); 0 on success. */
static int pow2_exponent(const char *tok, mpq_t e)
{
    while (*tok == ' ')
        tok++;
    if (strncmp(tok, "2^", 2) != 0)
        return -1;
    return abl_decimal_to_mpq(tok + 2, e) == ABL_OK ? 0 : -1;
}

/* Printed "2^a, 2^b, ..., 2^z" against the computed steepest, second and flattest slopes. */
static abl_status check_slopes(abl_reproduction *r, const char *id, const char *printed, const abl_paper_model *m,
                               const abl_schedule_spec *spec)
{
    abl_format bf16;
    abl_format_lookup("bf16", &bf16);
    long k;
    abl_threshold_log2_multiple(&bf16, ABL_TAU_FTZ, &k);
    abl_schedule s;
    memset(&s, 0, sizeof s);
    abl_status st = abl_schedule_build(spec, m->heads, k, &s);
    abl_slope *sorted = NULL;
    if (st == ABL_OK)
        st = abl_schedule_sorted(&s, &sorted);
    if (st != ABL_OK) {
        abl_schedule_free(&s);
        return st;
    }
    /* Tokens: first, second, ..., last. */
    char *buf = strdup(printed), *computed = NULL, *conv = NULL;
    if (buf == NULL) {
        free(sorted);
        abl_schedule_free(&s);
        return ABL_ERR_NO_MEMORY;
    }
    const char *tok[8];
    int nt = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t != NULL && nt < 8; t = strtok_r(NULL, ",", &save))
        tok[nt++] = t;
    int equal = nt == 4 && strstr(tok[2], "...") != NULL && s.count >= 3;
    const abl_slope *want[3] = {&sorted[0], &sorted[s.count > 1 ? 1 : 0], &sorted[s.count - 1]};
    const char *got[3] = {nt > 0 ? tok[0] : "", nt > 1 ? tok[1] : "", nt > 3 ? tok[3] : ""};
    mpq_t e;
    mpq_init(e);
    for (int i = 0; i < 3 && equal; i++) {
        /* A printed 2^e equals the slope iff the slope is the power 2^(num/den) with e = num/den. */
        const abl_slope *w = want[i];
        equal = pow2_exponent(got[i], e) == 0 && w->form == ABL_SLOPE_POW2 &&
                mpz_cmp_si(mpq_numref(e), w->pow2_num) == 0 && mpz_cmp_si(mpq_denref(e), w->pow2_den) == 0;
    }
    mpq_clear(e);
    char *a = abl_slope_exact_text(want[0]), *b = abl_slope_exact_text(want[1]), *z = abl_slope_exact_text(want[2]);
    computed = abl_strf("%s, %s, ..., %s", a ? a : "?", b ? b : "?", z ? z : "?");
    free(a);
    free(b);
    free(z);
    free(buf);
    conv = abl_strf("%s, %d heads, steepest first (compared as numbers)", s.spec, m->heads);
    free(sorted);
    abl_schedule_free(&s);
    st = check_eq(r, id, printed, computed, conv, equal, NULL);
    free(computed);
    free(conv);
    return st;
}

static abl_status check_input(abl_reproduction *r, const char *id, const char *printed, long value,
                              const abl_paper_model *m)
{
    char *computed = abl_strf("%ld", value), *conv = abl_strf("input: %s model config", m->hub_id);
    abl_status st = check(r, id, printed, computed, conv, NULL);
    free(computed);
    free(conv);
    return st;
}

/* One delta column (delta_1, delta_H) of a Table 1 row against the computed delta, printed as the paper's
 * tables print it. */
static abl_status check_delta(abl_reproduction *r, const abl_csv *t1, size_t row, const char *key, const abl_delta *d,
                              const char *conv)
{
    const char *name = abl_csv_get(t1, row, "model");
    char *id = abl_strf("table1.%s.%s", name, key), *computed = delta_string(d);
    abl_status st = check(r, id, abl_csv_get(t1, row, key), computed, conv, NULL);
    free(id);
    free(computed);
    return st;
}

static abl_status check_table1(abl_reproduction *r, const abl_csv *t1, const abl_csv *t5)
{
    abl_format bf16;
    abl_format_lookup("bf16", &bf16);
    abl_status st = ABL_OK;
    abl_delta first, last;
    abl_delta_init(&first);
    abl_delta_init(&last);
    for (size_t row = 0; row < t1->rows && st == ABL_OK; row++) {
        const char *name = abl_csv_get(t1, row, "model");
        const abl_paper_model *m = abl_paper_model_find(name);
        char *id = NULL, *conv = NULL;
        if (m == NULL) {
            id = abl_strf("table1.%s.model", name);
            st = check(r, id, name, "(no such model)", "Table 1 models: BLOOM, Falcon-RW, MPT", NULL);
            free(id);
            continue;
        }
        id = abl_strf("table1.%s.heads", name);
        st = check_input(r, id, abl_csv_get(t1, row, "heads"), m->heads, m);
        free(id);
        id = abl_strf("table1.%s.window", name);
        if (st == ABL_OK)
            st = check_input(r, id, abl_csv_get(t1, row, "window"), (long)m->window, m);
        free(id);
        id = abl_strf("table1.%s.layers", name);
        if (st == ABL_OK)
            st = check_input(r, id, abl_csv_get(t1, row, "layers"), m->layers, m);
        free(id);
        id = abl_strf("table1.%s.slopes", name);
        abl_schedule_spec spec; /* the model's schedule, resolved once for both checks */
        memset(&spec, 0, sizeof spec);
        if (st == ABL_OK)
            st = abl_paper_model_schedule(m, &spec);
        if (st == ABL_OK)
            st = check_slopes(r, id, abl_csv_get(t1, row, "slopes"), m, &spec);
        if (st == ABL_OK)
            st = abl_paper_model_deltas(&spec, m->heads, &bf16, ABL_CONV_PAPER, &first, &last, NULL);
        abl_schedule_spec_free(&spec);
        free(id);
        if (st != ABL_OK)
            break;
        char *what = abl_strf("%s, %d heads", m->slopes, m->heads);
        conv = paper_convention(what);
        free(what);
        st = check_delta(r, t1, row, "delta_1", &first, conv);
        if (st == ABL_OK)
            st = check_delta(r, t1, row, "delta_H", &last, conv);
        free(conv);
    }
    /* Table 5 repeats the three models: its inputs against the same configurations. */
    for (size_t i = 0; i < abl_paper_model_count() && st == ABL_OK; i++) {
        const abl_paper_model *m = abl_paper_model_at(i);
        long row = abl_csv_find(t5, "model", m->table5_name);
        char *id;
        if (row < 0) {
            id = abl_strf("table5.%s.model", m->table5_name);
            st = check(r, id, "(absent)", m->table5_name, "Table 5 lists every model of Table 1", NULL);
            free(id);
            continue;
        }
        id = abl_strf("table5.%s.heads", m->table5_name);
        st = check_input(r, id, abl_csv_get(t5, (size_t)row, "heads"), m->heads, m);
        free(id);
        id = abl_strf("table5.%s.window", m->table5_name);
        if (st == ABL_OK)
            st = check_input(r, id, abl_csv_get(t5, (size_t)row, "window"), (long)m->window, m);
        free(id);
    }
    abl_delta_clear(&first);
    abl_delta_clear(&last);
    return st;
}

/* ---------------------------------------------------------------- Table 8 */

static abl_status check_table8(abl_reproduction *r, const abl_csv *t8)
{
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_delta d[ABL_TABLE8_HEADS];
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_init(&d[h]);
    abl_status st = ABL_OK;
    for (size_t row = 0; row < t8->rows && st == ABL_OK; row++) {
        const char *name = abl_csv_get(t8, row, "name");
        const abl_table8_config *c = abl_table8_config_find(name);
        char *id, *conv;
        if (c == NULL) {
            id = abl_strf("table8.%s", name);
            st = check(r, id, name, "(no such configuration)", "spec §8 lists 16 configurations", NULL);
            free(id);
            continue;
        }
        char *sp = NULL;
        if ((st = abl_table8_deltas(c, &o, d, &sp)) != ABL_OK)
            break;
        conv = paper_convention(sp);
        free(sp);
        for (int h = 0; h < ABL_TABLE8_HEADS && st == ABL_OK; h++) {
            char *key = abl_strf("d%d", h + 1), *computed = abl_table8_cell_text(&d[h], 0);
            id = key != NULL ? abl_strf("table8.%s.%s", name, key) : NULL;
            st = check(r, id, id != NULL ? abl_csv_get(t8, row, key) : "", computed, conv, NULL);
            free(id);
            free(key);
            free(computed);
        }
        free(conv);
    }
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_clear(&d[h]);
    return st;
}

/* ---------------------------------------------------------------- claims of the text */

/* "36.6%" with the same decimals as printed, malloc'd (NULL: out of memory). */
static char *percent_like(const mpq_t q, const char *printed)
{
    char *t = abl_fraction_percent_text(q, printed_decimals(printed));
    char *s = t != NULL ? abl_strf("%s%%", t) : NULL;
    free(t);
    return s;
}

/* The press layer of H heads under the paper's convention, with fractions at context n. */
static abl_status paper_layer(int heads, const abl_schedule_spec *slopes, unsigned mitigations, uint64_t n, abl_analysis *a)
{
    abl_format bf16;
    abl_format_lookup("bf16", &bf16);
    return abl_analysis_layer(&bf16, ABL_CONV_PAPER, heads, slopes, mitigations, n, a);
}

static abl_status claim_tau(abl_reproduction *r, const char *id, const char *printed, const char *dtype)
{
    abl_format fmt;
    abl_format_lookup(dtype, &fmt);
    char *computed = NULL;
    int dec = printed_decimals(printed);
    abl_status st = abl_threshold_string(&fmt, ABL_TAU_SUBNORMAL, dec, &computed);
    if (st != ABL_OK)
        return st;
    char *conv = abl_strf("%s subnormal kind (the text's τu), rounded to %d decimals", dtype, dec);
    st = check(r, id, printed, computed, conv, NULL);
    free(conv);
    free(computed);
    return st;
}

static abl_status claim_fraction(abl_reproduction *r, const char *id, const char *printed, int matrix)
{
    abl_analysis a;
    abl_status st = paper_layer(16, NULL, 0, 2048, &a);
    char *computed = NULL, *other = NULL, *conv = NULL, *remark = NULL;
    if (st == ABL_OK && !matrix) {
        computed = percent_like(a.row_fraction, printed);
        other = abl_fraction_percent_text(a.matrix_fraction, 1);
        conv = paper_convention("row fraction of the 16-head press layer at N = 2048");
        remark = other != NULL ? abl_strf("the last query row's blind share (Figure 1b); the same layer's matrix "
                                          "fraction is %s %% (errata: two denominators)",
                                          other)
                               : NULL;
        st = remark != NULL ? check(r, id, printed, computed, conv, remark) : ABL_ERR_NO_MEMORY;
    } else if (st == ABL_OK) {
        /* One head with the layer's steepest delta (124), over the causal entries. */
        mpq_t row, mat;
        mpq_inits(row, mat, (mpq_ptr)0);
        st = abl_fraction_matrix(&a.results[0].delta, 1, 2048, 0, mat);
        if (st == ABL_OK)
            st = abl_fraction_row(&a.results[0].delta, 1, 2048, 0, row);
        if (st == ABL_OK) {
            char *d = delta_string(&a.results[0].delta);
            computed = percent_like(mat, printed);
            other = abl_fraction_percent_text(row, 1);
            char *what = d != NULL ? abl_strf("matrix fraction T(N − δ)/T(N) of one head, δ = %s, N = 2048", d) : NULL;
            conv = paper_convention(what);
            free(what);
            free(d);
            remark = other != NULL ? abl_strf("the share of the causal N(N + 1)/2 entries; the same head's row "
                                              "fraction is %s %%, not the Figure 1b curve (errata: two denominators)",
                                              other)
                                   : NULL;
            st = remark != NULL ? check(r, id, printed, computed, conv, remark) : ABL_ERR_NO_MEMORY;
        }
        mpq_clears(row, mat, (mpq_ptr)0);
    }
    free(computed);
    free(other);
    free(conv);
    free(remark);
    abl_analysis_free(&a);
    return st;
}

static abl_status claim_log_delta1(abl_reproduction *r, const char *id, const char *printed)
{
    abl_analysis a;
    abl_status st = paper_layer(16, NULL, ABL_MITIGATE_LOG, 2048, &a);
    if (st == ABL_OK) {
        char *computed = abl_delta_text(&a.results[0].delta, 0);
        char *conv = paper_convention("press, 16 heads, log distance: δ1 = exp(-τ/2^-0.5) - 1");
        st = check(r, id, printed, computed, conv, "Table 8's Log row gives * for the same head");
        free(computed);
        free(conv);
    }
    abl_analysis_free(&a);
    return st;
}

static abl_status claim_clamp(abl_reproduction *r, const char *id, const char *printed)
{
    abl_format bf16;
    abl_format_lookup("bf16", &bf16);
    abl_blind_query q;
    memset(&q, 0, sizeof q);
    q.format = bf16;
    q.convention = ABL_CONV_FTZ;
    char *computed = NULL, *margin = NULL;
    mpq_t c;
    mpq_init(c);
    int ok = abl_decimal_to_mpq(printed, c) == ABL_OK;
    q.clamp = c;
    if (ok && (abl_clamp_margin_string(&q, 4, &margin) != ABL_OK || strlen(margin) > 64))
        ok = 0;
    mpq_clear(c);
    if (!ok) {
        free(margin);
        return check(r, id, printed, "(not a number)", "clamp c against τd", NULL);
    }
    computed = abl_strf("c - τd = %s", margin);
    int above = margin[0] != '-' && strcmp(margin, "0.0000") != 0;
    free(margin);
    /* The claim holds when the clamped exponent stays normal: c above tau_d. */
    abl_status st = check_eq(r, id, printed, computed,
                             "consistency: c > τd (ftz kind, bf16 and fp32: -87.3365) keeps clamped weights normal",
                             above,
                             "only 0.3365 nats above τd: at ε = 0 the clamped head never goes blind, but a logit "
                             "below -0.3365 still underflows");
    free(computed);
    return st;
}

/* "32 64 ... 2048": E's first, second and last delta on a layer whose last target is the printed one. */
static abl_status claim_robust_example(abl_reproduction *r, const char *id, const char *printed)
{
    char *buf = strdup(printed);
    if (buf == NULL)
        return ABL_ERR_NO_MEMORY;
    char *save = NULL, *tok[8];
    int nt = 0;
    for (char *t = strtok_r(buf, " ", &save); t != NULL && nt < 8; t = strtok_r(NULL, " ", &save))
        tok[nt++] = t;
    mpq_t last;
    mpq_init(last);
    int heads = 0;
    if (nt == 4 && abl_decimal_to_mpq(tok[3], last) == ABL_OK && mpz_cmp_ui(mpq_denref(last), 1) == 0) {
        /* 32 * 2^(H-1) = last */
        for (int h = 1; h <= 64; h++) {
            mpz_t t;
            mpz_init_set_ui(t, 32);
            mpz_mul_2exp(t, t, (mp_bitcnt_t)(h - 1));
            int hit = mpz_cmp(t, mpq_numref(last)) == 0;
            mpz_clear(t);
            if (hit) {
                heads = h;
                break;
            }
        }
    }
    mpq_clear(last);
    if (heads < 3) {
        free(buf);
        return check(r, id, printed, "(not of the form 32 64 ... 32·2^(H-1))", "robust:32", NULL);
    }
    abl_analysis a;
    abl_status st = paper_layer(heads, NULL, ABL_MITIGATE_EXPLICIT, 2048, &a);
    if (st == ABL_OK) {
        char *d1 = delta_string(&a.results[0].delta), *d2 = delta_string(&a.results[1].delta);
        char *dh = delta_string(&a.results[heads - 1].delta);
        char *computed = d1 != NULL && d2 != NULL && dh != NULL ? abl_strf("%s %s ... %s", d1, d2, dh) : NULL;
        free(d1);
        free(d2);
        free(dh);
        const char *target = tok[3];
        char *what = abl_strf("robust:32 on %d heads (the count whose last target is %s)", heads, target);
        char *conv = paper_convention(what);
        st = check(r, id, printed, computed, conv, NULL);
        free(computed);
        free(what);
        free(conv);
    }
    free(buf);
    abl_analysis_free(&a);
    return st;
}

static abl_status claim_explicit(abl_reproduction *r, const char *id, const char *printed)
{
    abl_paper_options o;
    abl_paper_options_default(&o);
    abl_delta d[ABL_TABLE8_HEADS];
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_init(&d[h]);
    char *sp = NULL;
    abl_status st = abl_table8_deltas(abl_table8_config_find("Explicit"), &o, d, &sp);
    if (st == ABL_OK) {
        char *computed = delta_string(&d[ABL_TABLE8_HEADS - 1]);
        char *what = sp != NULL ? abl_strf("δH of Explicit (%s, 9 heads)", sp) : NULL, *conv = paper_convention(what);
        st = check(r, id, printed, computed, conv, NULL);
        free(computed);
        free(what);
        free(conv);
        free(sp);
    }
    for (int h = 0; h < ABL_TABLE8_HEADS; h++)
        abl_delta_clear(&d[h]);
    return st;
}

static abl_status claim_mpt(abl_reproduction *r, const char *id, const char *printed)
{
    const abl_paper_model *m = abl_paper_model_find("MPT");
    abl_format bf16;
    abl_format_lookup("bf16", &bf16);
    abl_delta first, last;
    abl_delta_init(&first);
    abl_delta_init(&last);
    abl_schedule_spec spec;
    abl_status st = abl_paper_model_schedule(m, &spec);
    if (st == ABL_OK)
        st = abl_paper_model_deltas(&spec, m->heads, &bf16, ABL_CONV_PAPER, &first, &last, NULL);
    abl_schedule_spec_free(&spec);
    if (st == ABL_OK) {
        char *computed = delta_string(&last), *conv = paper_convention("δH of MPT-7B (mpt:8, 32 heads)");
        st = check(r, id, printed, computed, conv, NULL);
        free(computed);
        free(conv);
    }
    abl_delta_clear(&first);
    abl_delta_clear(&last);
    return st;
}

static abl_status check_claims(abl_reproduction *r, const abl_csv *claims)
{
    abl_status st = ABL_OK;
    for (size_t row = 0; row < claims->rows && st == ABL_OK; row++) {
        const char *cid = abl_csv_get(claims, row, "id"), *v = abl_csv_get(claims, row, "printed_value");
        char *id = abl_strf("claim.%s", cid);
        size_t k;
        for (k = 0; k < sizeof not_computable / sizeof not_computable[0]; k++)
            if (strcmp(not_computable[k].id, cid) == 0)
                break;
        if (k < sizeof not_computable / sizeof not_computable[0])
            st = add_note(r, not_computable[k].why);
        else if (strcmp(cid, "tau_u_fp32_text") == 0)
            st = claim_tau(r, id, v, "fp32");
        else if (strcmp(cid, "tau_u_bf16_text") == 0)
            st = claim_tau(r, id, v, "bf16");
        else if (strcmp(cid, "row_fraction_16h_2048") == 0)
            st = claim_fraction(r, id, v, 0);
        else if (strcmp(cid, "matrix_fraction_window124") == 0)
            st = claim_fraction(r, id, v, 1);
        else if (strcmp(cid, "log_delta1") == 0)
            st = claim_log_delta1(r, id, v);
        else if (strcmp(cid, "clamp_value") == 0)
            st = claim_clamp(r, id, v);
        else if (strcmp(cid, "robust_slopes_example") == 0)
            st = claim_robust_example(r, id, v);
        else if (strcmp(cid, "explicit_target") == 0)
            st = claim_explicit(r, id, v);
        else if (strcmp(cid, "mpt_clamp") == 0)
            st = claim_mpt(r, id, v);
        else
            st = check(r, id, v, "(no computation defined)", "-", "a claim the tool does not know");
        free(id);
    }
    return st;
}

/* ---------------------------------------------------------------- run and report */

abl_status abl_reproduce_run(const abl_published *pub, abl_reproduction *r)
{
    if (pub == NULL || r == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    memset(r, 0, sizeof *r);
    if ((r->source = strdup(pub->source != NULL ? pub->source : "")) == NULL)
        return ABL_ERR_NO_MEMORY;
    abl_status st = check_table4(r, &pub->files[ABL_PUB_TABLE4]);
    if (st == ABL_OK)
        st = check_table1(r, &pub->files[ABL_PUB_TABLE1], &pub->files[ABL_PUB_TABLE5]);
    if (st == ABL_OK)
        st = check_table8(r, &pub->files[ABL_PUB_TABLE8]);
    if (st == ABL_OK)
        st = check_claims(r, &pub->files[ABL_PUB_CLAIMS]);
    /* A documented difference that no check met is stale too (the value left the transcription). */
    for (size_t i = 0; i < abl_known_difference_count() && st == ABL_OK; i++) {
        size_t c;
        for (c = 0; c < r->count; c++)
            if (strcmp(r->checks[c].id, known[i].id) == 0)
                break;
        if (c < r->count)
            continue;
        abl_check *x = new_check(r);
        if (x == NULL) {
            st = ABL_ERR_NO_MEMORY;
            break;
        }
        st = check_texts(x, known[i].id, "(absent)", known[i].computed, "-");
        x->verdict = ABL_VERDICT_DIFFERS;
        x->errata = ABL_ERRATA_STALE;
        x->reason = strdup("documented difference, but the transcription no longer has this value");
        if (st == ABL_OK && x->reason == NULL)
            st = ABL_ERR_NO_MEMORY;
        r->differences++;
        r->stale++;
    }
    if (st != ABL_OK)
        abl_reproduction_free(r);
    return st;
}

int abl_reproduction_ok(const abl_reproduction *r)
{
    return r != NULL && r->unexplained == 0 && r->stale == 0;
}

/* The counts of the summary, each as text and JSON (the same digits). */
static abl_status count_summaries(abl_report *rep, const abl_reproduction *r)
{
    const struct {
        const char *key, *label;
        size_t n;
    } rows[] = {
        {"checked", "values checked", r->count},     {"matches", "match", r->matches},
        {"differences", "differ", r->differences},   {"documented", "documented", r->documented},
        {"unexplained", "unexplained", r->unexplained}, {"stale", "stale errata", r->stale},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t n = rows[i].n;
        char *j = abl_strf("%zu", n);
        if (j == NULL)
            return ABL_ERR_NO_MEMORY;
        abl_report_summary(rep, rows[i].key, rows[i].label, j, j);
        free(j);
    }
    return ABL_OK;
}

abl_status abl_reproduce_report(const abl_reproduction *r, int differences_only, abl_report **out)
{
    if (r == NULL || out == NULL)
        return ABL_ERR_INVALID_ARGUMENT;
    abl_report *rep = abl_report_new("Reproduction of the paper's published numbers", "checks");
    if (rep == NULL)
        return ABL_ERR_NO_MEMORY;
    {
        /* The directory's name whole (text), JSON-escaped. */
        size_t sl = strlen(r->source);
        char *st_ = malloc(sl + 64), *sj = abl_report_json_string(r->source);
        if (st_ == NULL || sj == NULL) {
            free(st_);
            free(sj);
            abl_report_free(rep);
            return ABL_ERR_NO_MEMORY;
        }
        sprintf(st_, "%s%s", r->source,
                strcmp(r->source, "built-in") == 0 ? " (tables/published, transcribed from arXiv 2608.03994v1)" : "");
        abl_report_meta(rep, "published", "published values", st_, sj);
        free(st_);
        free(sj);
    }
    abl_report_meta(rep, "default_convention", "convention",
                    "paper unless a row says otherwise: bf16, τ = -87.3365 (ftz kind), δ rounded to the nearest "
                    "integer",
                    "\"paper\"");
    abl_report_column(rep, "id", "id", ABL_ALIGN_LEFT);
    abl_report_column(rep, "published", "published", ABL_ALIGN_RIGHT);
    abl_report_column(rep, "computed", "computed", ABL_ALIGN_RIGHT);
    abl_report_column(rep, "verdict", "verdict", ABL_ALIGN_LEFT);
    abl_report_column(rep, "errata", "errata", ABL_ALIGN_LEFT);
    abl_report_column(rep, "convention", "convention", ABL_ALIGN_LEFT);
    abl_report_column(rep, "reason", "reason", ABL_ALIGN_LEFT);
    for (size_t i = 0; i < r->count; i++) {
        const abl_check *c = &r->checks[i];
        if (differences_only && c->verdict == ABL_VERDICT_MATCH && c->errata == ABL_ERRATA_NONE)
            continue;
        abl_report_row(rep);
        abl_report_cell(rep, c->id, NULL, NULL);
        abl_report_cell(rep, c->published, NULL, NULL);
        abl_report_cell(rep, c->computed, NULL, NULL);
        abl_report_cell(rep, abl_verdict_name(c->verdict), NULL, NULL);
        const char *e = abl_errata_state_name(c->errata);
        abl_report_cell(rep, e[0] ? e : "—", e[0] ? NULL : "null", NULL);
        abl_report_cell(rep, c->convention, NULL, NULL);
        abl_report_cell(rep, c->reason, NULL, NULL);
    }
    char *t = abl_strf("%zu values: %zu match, %zu differ (%zu documented in docs/errata.md, %zu unexplained)%s",
                       r->count, r->matches, r->differences, r->documented, r->unexplained,
                       r->stale ? ", stale errata present" : "");
    if (t == NULL) {
        abl_report_free(rep);
        return ABL_ERR_NO_MEMORY;
    }
    abl_report_summary(rep, "summary", "checked", t, NULL);
    free(t);
    abl_status st = count_summaries(rep, r);
    if (st != ABL_OK) {
        abl_report_free(rep);
        return st;
    }
    int ok = abl_reproduction_ok(r);
    abl_report_summary(rep, "ok", "result",
                       ok ? "every difference is documented in docs/errata.md"
                          : "UNEXPLAINED DIFFERENCES or stale errata: see the rows marked unexplained / stale",
                       ok ? "true" : "false");
    for (size_t i = 0; i < r->nnotes; i++)
        abl_report_note(rep, r->notes[i]);
    abl_report_note(rep, "verdict: match when the computed value, printed the way the paper prints it, equals the "
                         "published one. errata: documented = explained in docs/errata.md; unexplained = a new "
                         "difference (exit status 1); stale = documented but no longer true (exit status 1).");
    *out = rep;
    return ABL_OK;
}

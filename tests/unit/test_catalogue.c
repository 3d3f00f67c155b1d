/*
 * Unit tests for the model catalogue (include/abl/model/catalogue.h). Independent checks:
 * - every code path's typed pipeline builds and the emulator runs it, and its display name reads back
 *   (abl_pipeline_spec_parse) as the same preset and overrides;
 * - every slope list equals the closed form of the model's own code, recomputed here the way the
 *   code does it in binary64: BLOOM/Press get_slopes (base = 2^(-2^-(log2 c - 3)), slopes base^k,
 *   then the odd powers of the base for 2c, for a non-power-of-two H) and llm-foundry gen_slopes
 *   (m = arange(1, H'+1) * B/H', slopes 1/2^m, reordered concat(s[1::2], s[::2])[:H] when H' != H);
 * - lookups by name, alias and Hugging Face id, case-insensitive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alibi_blind.h"

/* The message pointer for one more call: the previous call's message freed (the library sets *msg
 * afresh on every call and the caller owns what it gets). */
static char **fresh(char **msg)
{
    free(*msg);
    *msg = NULL;
    return msg;
}

/* Press et al. / BLOOM get_slopes, as the Python code computes it. */
static void press_closed_form(int H, double *out)
{
    int c = 1 << (int)floor(log2((double)H));
    double base = pow(2.0, -pow(2.0, -(log2((double)c) - 3)));
    for (int k = 1; k <= c; k++)
        out[k - 1] = pow(base, k);
    if (c != H) {
        double extra = pow(2.0, -pow(2.0, -(log2(2.0 * c) - 3)));
        int rem = H - c < c ? H - c : c;
        for (int i = 0; i < rem; i++)
            out[c + i] = pow(extra, 2 * i + 1);
    }
}

/* llm-foundry gen_slopes(n_heads, alibi_bias_max). */
static void mpt_closed_form(int H, double B, double *out)
{
    int Hp = 1 << (int)ceil(log2((double)H));
    double *s = malloc(sizeof *s * (size_t)Hp);
    assert_non_null(s);
    for (int i = 0; i < Hp; i++)
        s[i] = 1.0 / pow(2.0, (i + 1) * (B / Hp));
    if (Hp == H) {
        memcpy(out, s, sizeof *s * (size_t)H);
    } else {
        int k = 0;
        for (int i = 1; i < Hp && k < H; i += 2)
            out[k++] = s[i];
        for (int i = 0; i < Hp && k < H; i += 2)
            out[k++] = s[i];
    }
    free(s);
}

static void test_presets_exist(void **state)
{
    (void)state;
    assert_true(abl_model_count() >= 30);
    for (size_t i = 0; i < abl_model_count(); i++) {
        const abl_model *m = abl_model_at(i);
        assert_non_null(m->family);
        assert_true(m->family->npaths >= 1);
        abl_format dt;
        if (abl_format_lookup(m->dtype, &dt) != ABL_OK)
            fail_msg("%s: dtype '%s' unknown", m->name, m->dtype);
        for (size_t k = 0; k < m->family->npaths; k++) {
            abl_pipeline p;
            abl_pipeline_spec ps;
            char *err = NULL;
            assert_int_equal(abl_code_path_pipeline(&m->family->paths[k], &ps), ABL_OK);
            assert_string_equal(ps.text, m->family->paths[k].pipeline);
            assert_int_equal(abl_pipeline_build(&ps, &dt, &p), ABL_OK);
            assert_int_equal(abl_pipeline_check_msg(&p, fresh(&err)), ABL_OK);
            abl_pipeline_spec_free(&ps);
            free(err);
        }
        assert_non_null(m->source);
        assert_true(strlen(m->source) > 10);
    }
}

/* Two pipeline descriptions are the same value: preset and every override's field and value. */
static void assert_same_pipeline(const abl_pipeline_spec *a, const abl_pipeline_spec *b)
{
    assert_string_equal(a->preset, b->preset);
    assert_int_equal(a->noverrides, b->noverrides);
    for (size_t i = 0; i < a->noverrides; i++) {
        const abl_pipeline_override *x = &a->overrides[i], *y = &b->overrides[i];
        assert_int_equal(x->field, y->field);
        assert_int_equal(x->model, y->model);
        assert_int_equal(x->value, y->value);
        assert_true(x->ratio.num == y->ratio.num && x->ratio.den == y->ratio.den);
        if (!x->model)
            assert_string_equal(x->dtype.name, y->dtype.name);
    }
}

/* The typed value of each code path is what its display name says (the name is parsed here, in the test: the
 * library never parses it), so outputs that show the name describe the kernel that ran. */
static void test_code_path_names_read_back(void **state)
{
    (void)state;
    for (size_t f = 0; f < abl_model_family_count(); f++) {
        const abl_model_family *fam = abl_model_family_at(f);
        for (size_t k = 0; k < fam->npaths; k++) {
            abl_pipeline_spec typed, parsed;
            assert_int_equal(abl_code_path_pipeline(&fam->paths[k], &typed), ABL_OK);
            assert_int_equal(abl_pipeline_spec_parse(fam->paths[k].pipeline, &parsed, NULL), ABL_OK);
            assert_same_pipeline(&typed, &parsed);
            abl_pipeline_spec_free(&typed);
            abl_pipeline_spec_free(&parsed);
        }
    }
}

static void test_slopes_closed_form(void **state)
{
    (void)state;
    for (size_t i = 0; i < abl_model_count(); i++) {
        const abl_model *m = abl_model_at(i);
        if (m->heads == 0)
            continue; /* not found: nothing to check (docs/models.md) */
        abl_schedule s;
        memset(&s, 0, sizeof s);
        abl_schedule_spec spec;
        assert_int_equal(abl_model_schedule(m, &spec), ABL_OK);
        assert_int_equal(abl_schedule_build(&spec, m->heads, -126, &s), ABL_OK);
        abl_schedule_spec_free(&spec);
        assert_int_equal(s.count, m->heads);
        double *want = malloc(sizeof *want * (size_t)m->heads);
        assert_non_null(want);
        if (m->slopes.kind == ABL_SCHEDULE_PRESS)
            press_closed_form(m->heads, want);
        else if (m->slopes.kind == ABL_SCHEDULE_MPT)
            mpt_closed_form(m->heads, (double)m->slopes.mpt_bias, want);
        else
            fail_msg("%s: schedule kind %d has no closed form here", m->name, (int)m->slopes.kind);
        for (int h = 0; h < m->heads; h++) {
            assert_int_equal(s.slopes[h].index, h + 1);
            double rel = fabs(s.slopes[h].value - want[h]) / want[h];
            if (rel > 1e-13) /* pow() of a rounded base: a few ulps */
                fail_msg("%s head %d: %.17g, closed form %.17g", m->name, h + 1, s.slopes[h].value, want[h]);
        }
        free(want);
        abl_schedule_free(&s);
    }
}

static void test_closed_form_spot_values(void **state)
{
    (void)state;
    /* BLOOM-176B: 112 heads, c = 64: head 1 = 2^-0.125, head 65 = 2^-0.0625 (the odd powers of 2^-1/16) */
    double v[112];
    press_closed_form(112, v);
    assert_true(fabs(v[0] - pow(2, -0.125)) < 1e-16);
    assert_true(fabs(v[64] - pow(2, -0.0625)) < 1e-16);
    assert_true(fabs(v[111] - pow(2, -0.0625 * 95)) < 1e-16);
    /* 40 heads: c = 32 then 8 odd powers of 2^-(1/8) */
    press_closed_form(40, v);
    assert_true(fabs(v[32] - pow(2, -0.125)) < 1e-16);
    /* mpt:8 with 12 heads: H' = 16, s[i] = 2^-((i+1)/2): first s[1] = 2^-1, s[3], ..., then s[0] = 2^-0.5 */
    mpt_closed_form(12, 8, v);
    assert_true(fabs(v[0] - 0.5) < 1e-16);
    assert_true(fabs(v[8] - pow(2, -0.5)) < 1e-15);
}

static void test_lookup(void **state)
{
    (void)state;
    const abl_model *a = abl_model_find("bloom-7b1");
    assert_non_null(a);
    assert_ptr_equal(abl_model_find("bigscience/bloom-7b1"), a);
    assert_ptr_equal(abl_model_find("BigScience/Bloom-7B1"), a);
    assert_ptr_equal(abl_model_find("bloom-7.1b"), a);
    assert_int_equal(a->heads, 32);
    assert_null(abl_model_find("bloom-7b"));
    assert_null(abl_model_find(""));
    assert_null(abl_model_find("llama-2-7b"));
    assert_ptr_equal(abl_model_suggest("bloom-7b"), a);
    assert_null(abl_model_suggest("completely-different-name"));
    const abl_model *f = abl_model_find("tiiuae/falcon-rw-7b");
    assert_non_null(f);
    assert_int_equal(f->heads, 64);
    assert_int_equal(f->head_dim, 64);
    assert_string_equal(abl_model_family_path(f->family, NULL)->name, "transformers-sdpa");
    assert_non_null(abl_model_family_path(f->family, "transformers-eager"));
    assert_null(abl_model_family_path(f->family, "nope"));
    /* every name, alias and id is unique across the catalogue */
    for (size_t i = 0; i < abl_model_count(); i++) {
        const abl_model *m = abl_model_at(i);
        if (abl_model_find(m->name) != m)
            fail_msg("'%s' finds '%s'", m->name, abl_model_find(m->name)->name);
        if (m->hf_id && abl_model_find(m->hf_id) != m)
            fail_msg("'%s' finds '%s'", m->hf_id, abl_model_find(m->hf_id)->name);
    }
}

static void test_reports(void **state)
{
    (void)state;
    for (int full = 0; full <= 1; full++) {
        abl_report *r = NULL;
        assert_int_equal(abl_model_catalogue_report(full, &r), ABL_OK);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_int_equal(abl_report_write(r, ABL_OUT_JSON, f), ABL_OK);
        fclose(f);
        assert_non_null(strstr(buf, "\"model\": \"bloom-560m\""));
        if (full)
            assert_non_null(strstr(buf, "\"hf_id\": \"bigscience/bloom-560m\""));
        free(buf);
        abl_report_free(r);
    }
    abl_report *r = NULL;
    assert_int_equal(abl_model_detail_report(abl_model_find("mpt-7b"), &r), ABL_OK);
    abl_report_free(r);
    assert_int_equal(abl_model_detail_report(NULL, &r), ABL_ERR_INVALID_ARGUMENT);
}

/* Serving engines (issue 18): every family has a row; the values are what the engines' sources say
 * (llama.cpp llama-model.cpp load_hparams: BLOOM, MPT, Jais, Baichuan-13B, Jina-BERT-v2 set
 * f_max_alibi_bias, Falcon is a RoPE architecture there; vLLM's falcon.py computes ALiBi slopes when
 * config.alibi; docs/models.md "Serving engines"). */
static void test_engines(void **state)
{
    (void)state;
    for (size_t i = 0; i < abl_model_family_count(); i++) {
        size_t n = 0;
        const abl_engine_served *e = abl_model_engines(abl_model_family_at(i), &n);
        assert_non_null(e);
        assert_int_equal(n, 2);
        assert_string_equal(e[0].engine, "llama.cpp");
        assert_string_equal(e[1].engine, "vLLM");
        assert_true(e[0].source[0] != '\0' && e[1].source[0] != '\0');
    }
    const struct {
        const char *family;
        abl_served llamacpp, vllm;
    } want[] = {
        {"bloom", ABL_SERVED_YES, ABL_SERVED_YES},         {"falcon-rw", ABL_SERVED_NO, ABL_SERVED_YES},
        {"mpt", ABL_SERVED_YES, ABL_SERVED_YES},           {"baichuan", ABL_SERVED_YES, ABL_SERVED_YES},
        {"jais", ABL_SERVED_YES, ABL_SERVED_YES},          {"jina-bert", ABL_SERVED_YES, ABL_SERVED_NOT_FOUND},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t n = 0;
        const abl_engine_served *e = abl_model_engines(abl_model_family_find(want[i].family), &n);
        assert_non_null(e);
        assert_int_equal(e[0].served, want[i].llamacpp);
        assert_int_equal(e[1].served, want[i].vllm);
    }
    size_t n = 7;
    assert_null(abl_model_engines(NULL, &n));
    assert_int_equal(n, 0);
    assert_string_equal(abl_served_name(ABL_SERVED_NOT_FOUND), "not found");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_exist),         cmocka_unit_test(test_code_path_names_read_back),
        cmocka_unit_test(test_slopes_closed_form),
        cmocka_unit_test(test_closed_form_spot_values), cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_reports),
        cmocka_unit_test(test_engines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Unit tests of the layer value (include/abl/model/layer.h): its builders (the defaults, a model's
 * config.json), its projections (pointers into the layer, nothing copied) and its ownership (a copy
 * outlives its source; run under ASan). Expected values: the configuration files as published
 * (tests/data/configs/README.md cites them: bloom-560m n_head 16; mpt-7b-instruct n_heads 32,
 * alibi_bias_max 8, max_seq_len 2048, torch_dtype bfloat16), the paper's Table 1 (16 heads, 2048 tokens:
 * delta_1 = 124, delta_16 = 22358, 9 heads blind) and docs/models.md (bloom runs transformers' eager path,
 * preset bloom-hf; mpt llm-foundry's torch path, preset mpt), never the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alibi_blind.h"

#ifndef ABL_SOURCE_DIR
#define ABL_SOURCE_DIR "."
#endif

static void load(const char *name, abl_model_spec *s)
{
    char path[512];
    char *err = NULL;
    snprintf(path, sizeof path, "%s/tests/data/configs/%s", ABL_SOURCE_DIR, name);
    if (abl_model_spec_from_file(path, s, &err) != ABL_OK)
        fail_msg("%s: %s", name, err);
    free(err);
}

static void expect_delta(const abl_delta *d, const char *want)
{
    char *t = abl_delta_text(d, 12);
    assert_non_null(t);
    assert_string_equal(t, want);
    free(t);
}

/* The default layer is the paper's: bf16, convention paper, press, eager, causal, nothing else given. */
static void test_default_is_the_papers_layer(void **state)
{
    (void)state;
    abl_layer l;
    abl_layer_init(&l);
    assert_string_equal(l.format.name, "bf16");
    assert_int_equal(l.convention, ABL_CONV_PAPER);
    assert_int_equal(l.attention, ABL_ATTENTION_CAUSAL);
    assert_string_equal(abl_attention_name(l.attention), "causal");
    assert_null(abl_layer_schedule(&l));
    l.heads = 16;
    l.context = 2048;
    abl_analysis_config c;
    abl_layer_analysis_config(&l, &c);
    assert_null(c.slopes);
    assert_null(c.logit);
    assert_null(c.clamp);
    assert_null(c.softcap);
    assert_null(c.logit_lo);
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    assert_int_equal(a.heads, 16);
    expect_delta(&a.results[0].delta, "124");
    expect_delta(&a.results[15].delta, "22358");
    assert_int_equal(a.blind_heads, 9);
    abl_analysis_free(&a);
    /* No pipeline: the kernel is eager. */
    abl_pipeline p;
    assert_int_equal(abl_layer_pipeline(&l, &p), ABL_OK);
    assert_string_equal(p.preset, "eager");
    abl_layer_free(&l);
}

/* bloom-560m's config.json: 16 heads, press, the bloom-hf kernel; the file gives no context. */
static void test_from_model_bloom(void **state)
{
    (void)state;
    abl_model_spec spec;
    load("bloom-560m.json", &spec);
    abl_layer l;
    char *msg = NULL;
    assert_int_equal(abl_layer_from_model(&spec, &l, &msg), ABL_OK);
    assert_null(msg);
    assert_int_equal(l.heads, 16);
    /* BLOOM's config.json has no context: the catalogue's trained context (BLOOM's 2048-token sequence
     * length, docs/models.md) fills it (issue 19) */
    assert_int_equal(l.context, 2048);
    assert_non_null(abl_layer_schedule(&l));
    assert_int_equal(l.schedule.kind, ABL_SCHEDULE_PRESS);
    assert_true(l.has_pipeline);
    assert_string_equal(l.pipeline.preset, "bloom-hf");
    assert_int_equal(l.attention, ABL_ATTENTION_CAUSAL);
    assert_false(l.has_logit || l.has_clamp || l.has_softcap || l.has_logit_range);
    /* The paper's layer at the model's heads: Table 1 again, through the model's schedule. */
    l.context = 2048;
    abl_analysis_config c;
    abl_layer_analysis_config(&l, &c);
    assert_ptr_equal(c.slopes, &l.schedule);
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    expect_delta(&a.results[0].delta, "124");
    assert_int_equal(a.blind_heads, 9);
    abl_analysis_free(&a);
    abl_layer_free(&l);
    abl_model_spec_free(&spec);
}

/* mpt-7b-instruct's config.json: 32 heads, mpt:8, bf16, 2048 tokens, the mpt kernel. */
static void test_from_model_mpt(void **state)
{
    (void)state;
    abl_model_spec spec;
    load("mpt-7b-instruct.json", &spec);
    abl_layer l;
    assert_int_equal(abl_layer_from_model(&spec, &l, NULL), ABL_OK);
    assert_int_equal(l.heads, 32);
    assert_int_equal(l.context, 2048);
    assert_string_equal(l.format.name, "bf16");
    assert_int_equal(l.schedule.kind, ABL_SCHEDULE_MPT);
    assert_int_equal(l.schedule.mpt_bias, 8);
    assert_string_equal(l.pipeline.preset, "mpt");
    abl_layer_free(&l);
    abl_model_spec_free(&spec);
}

static void test_from_model_refuses_null(void **state)
{
    (void)state;
    abl_layer l;
    char *msg = NULL;
    assert_int_equal(abl_layer_from_model(NULL, &l, &msg), ABL_ERR_INVALID_ARGUMENT);
    assert_null(msg);
}

/* A layer with every number given: the projections point at the layer's own numbers and schedule. */
static void fill(abl_layer *l)
{
    abl_layer_init(l);
    l->heads = 2;
    l->context = 4096;
    l->window = 1024;
    l->level = ABL_LEVEL_WEIGHT;
    l->mitigations = ABL_MITIGATE_CLAMP;
    assert_int_equal(abl_schedule_spec_parse("slopes:0.5,0.25", &l->schedule, NULL), ABL_OK);
    l->has_schedule = 1;
    assert_int_equal(abl_pipeline_spec_parse("eager,sum=exact", &l->pipeline, NULL), ABL_OK);
    l->has_pipeline = 1;
    mpq_set_si(l->logit, 3, 2);
    mpq_set_si(l->clamp, -87, 1);
    mpq_set_si(l->softcap, 30, 1);
    mpq_set_si(l->logit_lo, -10, 1);
    mpq_set_si(l->logit_hi, 5, 1);
    l->has_logit = l->has_clamp = l->has_softcap = l->has_logit_range = 1;
}

static void test_projections_point_into_the_layer(void **state)
{
    (void)state;
    abl_layer l;
    fill(&l);
    abl_analysis_config c;
    abl_layer_analysis_config(&l, &c);
    assert_ptr_equal(c.slopes, &l.schedule);
    assert_ptr_equal(c.logit, l.logit);
    assert_ptr_equal(c.clamp, l.clamp);
    assert_ptr_equal(c.softcap, l.softcap);
    assert_ptr_equal(c.logit_lo, l.logit_lo);
    assert_ptr_equal(c.logit_hi, l.logit_hi);
    assert_int_equal(c.heads, 2);
    assert_int_equal(c.context, 4096);
    assert_int_equal(c.window, 1024);
    assert_int_equal(c.level, ABL_LEVEL_WEIGHT);
    assert_int_equal(c.mitigations, ABL_MITIGATE_CLAMP);
    assert_null(c.progress.fn);
    abl_compare_config cc;
    assert_int_equal(abl_layer_compare_config(&l, &cc), ABL_OK);
    assert_ptr_equal(cc.slopes, &l.schedule);
    assert_int_equal(cc.heads, 2);
    assert_int_equal(cc.context, 4096);
    assert_string_equal(cc.dtype.name, "bf16");
    assert_string_equal(cc.pipeline.preset, "eager");
    assert_int_equal(cc.pipeline.sum, ABL_SUM_EXACT);
    abl_layer_free(&l);
}

/* The compare projection builds the kernel for the layer's format: fp16's model-dtype fields follow it. */
static void test_compare_follows_the_format(void **state)
{
    (void)state;
    abl_layer l;
    abl_layer_init(&l);
    assert_int_equal(abl_format_lookup("fp16", &l.format), ABL_OK);
    abl_compare_config cc;
    assert_int_equal(abl_layer_compare_config(&l, &cc), ABL_OK);
    assert_string_equal(cc.dtype.name, "fp16");
    /* eager computes the softmax in the model dtype (docs/pipelines.md) */
    assert_string_equal(cc.pipeline.output_dtype.name, "fp16");
    abl_layer_free(&l);
}

/* A copy owns its parts: the source freed, the copy still reads whole (ASan: no use after free). */
static void test_copy_outlives_its_source(void **state)
{
    (void)state;
    abl_layer src, dup;
    fill(&src);
    assert_int_equal(abl_layer_copy(&src, &dup), ABL_OK);
    assert_ptr_not_equal(dup.schedule.text, src.schedule.text);
    assert_ptr_not_equal(dup.pipeline.text, src.pipeline.text);
    abl_layer_free(&src);
    assert_string_equal(dup.schedule.text, "slopes:0.5,0.25");
    assert_int_equal(dup.schedule.count, 2);
    assert_string_equal(dup.pipeline.preset, "eager");
    assert_int_equal(mpq_cmp_si(dup.logit, 3, 2), 0);
    assert_int_equal(mpq_cmp_si(dup.clamp, -87, 1), 0);
    assert_int_equal(mpq_cmp_si(dup.softcap, 30, 1), 0);
    assert_int_equal(mpq_cmp_si(dup.logit_lo, -10, 1), 0);
    assert_int_equal(mpq_cmp_si(dup.logit_hi, 5, 1), 0);
    assert_true(dup.has_logit && dup.has_clamp && dup.has_softcap && dup.has_logit_range);
    assert_int_equal(dup.window, 1024);
    assert_int_equal(dup.level, ABL_LEVEL_WEIGHT);
    /* the copy analyses like the original would: 2 heads, slopes 1/2 and 1/4 */
    abl_analysis_config c;
    abl_layer_analysis_config(&dup, &c);
    abl_analysis a;
    assert_int_equal(abl_analysis_run(&c, &a), ABL_OK);
    assert_int_equal(a.heads, 2);
    assert_true(a.results[0].slope.value == 0.5 && a.results[1].slope.value == 0.25);
    abl_analysis_free(&a);
    abl_layer_free(&dup);
    /* freeing twice is harmless (the free zeroes the layer) */
    abl_layer_free(&dup);
}

/* A copy of a layer without schedule or pipeline has neither either. */
static void test_copy_of_defaults(void **state)
{
    (void)state;
    abl_layer src, dup;
    abl_layer_init(&src);
    assert_int_equal(abl_layer_copy(&src, &dup), ABL_OK);
    assert_null(abl_layer_schedule(&dup));
    assert_false(dup.has_pipeline);
    assert_null(dup.pipeline.text);
    abl_layer_free(&src);
    abl_layer_free(&dup);
}

/* Encoders (issue 19): a config.json of the jina-bert and mosaic-bert families gives a bidirectional layer
 * (the models' code: -m|i-j| over every key, docs/models.md), the catalogue's jina entry too, and every
 * projection carries the direction; bloom stays causal (above). */
static void test_encoder_layers_are_bidirectional(void **state)
{
    (void)state;
    /* jinaai/jina-embeddings-v2-base-en's config.json: model_type bert, position_embedding_type alibi (the
     * fields the classification reads; docs/models.md) */
    const char *jina = "{\"model_type\": \"bert\", \"position_embedding_type\": \"alibi\", "
                       "\"num_attention_heads\": 12, \"hidden_size\": 768, \"num_hidden_layers\": 12, "
                       "\"max_position_embeddings\": 8192}";
    for (size_t i = 0; i < 2; i++) {
        abl_model_spec spec;
        char *err = NULL;
        if (i == 0)
            assert_int_equal(abl_model_spec_from_json(jina, strlen(jina), &spec, &err), ABL_OK);
        else
            load("mosaic-bert-base.json", &spec);
        free(err);
        abl_layer l;
        char *msg = NULL;
        assert_int_equal(abl_layer_from_model(&spec, &l, &msg), ABL_OK);
        assert_int_equal(l.attention, ABL_ATTENTION_BIDIRECTIONAL);
        assert_string_equal(abl_attention_name(l.attention), "bidirectional");
        l.context = 64;
        abl_analysis_config c;
        abl_layer_analysis_config(&l, &c);
        assert_int_equal(c.attention, ABL_ATTENTION_BIDIRECTIONAL);
        abl_compare_config cc;
        assert_int_equal(abl_layer_compare_config(&l, &cc), ABL_OK);
        assert_int_equal(cc.attention, ABL_ATTENTION_BIDIRECTIONAL);
        abl_layer copy;
        assert_int_equal(abl_layer_copy(&l, &copy), ABL_OK);
        assert_int_equal(copy.attention, ABL_ATTENTION_BIDIRECTIONAL);
        abl_layer_free(&copy);
        abl_layer_free(&l);
        abl_model_spec_free(&spec);
    }
    const abl_model *m = abl_model_find("jina-embeddings-v2-base-en");
    assert_non_null(m);
    assert_int_equal(m->family->attention, ABL_ATTENTION_BIDIRECTIONAL);
    assert_int_equal(abl_model_family_find("bloom")->attention, ABL_ATTENTION_CAUSAL);
    abl_attention a;
    assert_int_equal(abl_attention_parse("bidirectional", &a), ABL_OK);
    assert_int_equal(a, ABL_ATTENTION_BIDIRECTIONAL);
    assert_int_equal(abl_attention_parse("Bidirectional", &a), ABL_ERR_INVALID_ARGUMENT);
    assert_null(abl_attention_name(ABL_ATTENTION_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_is_the_papers_layer),
        cmocka_unit_test(test_from_model_bloom),
        cmocka_unit_test(test_from_model_mpt),
        cmocka_unit_test(test_from_model_refuses_null),
        cmocka_unit_test(test_projections_point_into_the_layer),
        cmocka_unit_test(test_compare_follows_the_format),
        cmocka_unit_test(test_copy_outlives_its_source),
        cmocka_unit_test(test_copy_of_defaults),
        cmocka_unit_test(test_encoder_layers_are_bidirectional),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

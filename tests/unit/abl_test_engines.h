/* What the engine tests share (test_engines.c, test_engines_prefill.c): one case, a modelled preset's
 * simulation (every row run through the kernel model) and its zero-logit prediction of the same layer, for
 * the caller to compare; and the refusal of fields a kernel does not model. Include after <cmocka.h> and
 * "alibi_blind.h". */
#ifndef ABL_TEST_ENGINES_H
#define ABL_TEST_ENGINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* SPEC (a modelled preset, with fields) in DTYPE, HEADS heads at context N: sim and pred filled (the caller
 * frees both); a spec that does not parse, is not modelled, or a run that fails, fails the test. */
static inline void abl_test_engine_runs(const char *spec, const char *dtype, int heads, uint64_t n,
                                        abl_simulation *sim, abl_prediction *pred)
{
    abl_format model;
    assert_int_equal(abl_format_lookup(dtype, &model), ABL_OK);
    abl_simulate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *err = NULL;
    assert_int_equal(abl_pipeline_parse_msg(spec, &model, &cfg.pipeline, &err), ABL_OK);
    assert_int_equal(cfg.pipeline.modelled, 1);
    cfg.heads = heads;
    cfg.context = n;
    assert_int_equal(abl_simulate_run(&cfg, sim), ABL_OK);
    assert_int_equal(abl_predict_run(&cfg, pred), ABL_OK);
}

/* Each of the COUNT specs parses but is refused by the check (a field the kernel does not model), with a
 * message. */
static inline void abl_test_engine_refuses(const char *const *specs, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        abl_pipeline p;
        char *err = NULL;
        assert_int_equal(abl_pipeline_parse_msg(specs[k], NULL, &p, &err), ABL_OK);
        assert_int_equal(abl_pipeline_check_msg(&p, &err), ABL_ERR_UNSUPPORTED);
        assert_non_null(err);
        free(err);
    }
}

#endif

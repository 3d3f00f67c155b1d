/* The engine tests' one case (test_engines.c, test_engines_prefill.c): a modelled preset's simulation (every
 * row run through the kernel model) and its zero-logit prediction of the same layer, for the caller to
 * compare. Include after <cmocka.h> and "alibi_blind.h". */
#ifndef ABL_TEST_ENGINES_H
#define ABL_TEST_ENGINES_H

#include <stdint.h>
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

#endif

/* A program outside the project that uses the installed library: the bf16 thresholds of exp.
 * Expected values: spec §3 (ftz: ln 2^-126 = -126 ln 2; subnormal: ln 2^-133 = -133 ln 2),
 * independent of the library: -126*ln 2 = -87.33654475055310898657..., -133*ln 2 = -92.18857501447272615249... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "alibi_blind.h"

int main(void)
{
    abl_format bf16;
    if (abl_format_lookup("bf16", &bf16) != ABL_OK)
        return 1;
    char *buf = NULL;
    if (abl_threshold_string(&bf16, ABL_TAU_FTZ, 10, &buf) != ABL_OK)
        return 1;
    mpfr_t t;
    mpfr_init2(t, 64);
    abl_status st = abl_threshold_mpfr(t, &bf16, ABL_TAU_SUBNORMAL, MPFR_RNDN);
    double sub = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clear(t);
    long k = 0;
    abl_threshold_log2_multiple(&bf16, ABL_TAU_FTZ, &k);
    printf("alibi-blind %s: bf16 ftz tau = %s (k = %ld), subnormal tau = %.10f\n", ABL_VERSION_STRING, buf, k, sub);
    /* the decimal string may use an ASCII or a Unicode minus: compare the digits */
    /* The schedule is a value (issue 17): parsed once, then built; mpt:8 over 8 heads is 2^-h, h = 1..8
     * (llm-foundry's gen_slopes), so the steepest is 1/2 and the flattest 1/256. */
    abl_schedule_spec spec;
    abl_schedule sched;
    int sched_ok = abl_schedule_spec_parse("mpt:8", &spec, NULL) == ABL_OK && spec.kind == ABL_SCHEDULE_MPT &&
                   abl_schedule_build(&spec, 8, -126, &sched) == ABL_OK;
    if (sched_ok) {
        sched_ok = sched.count == 8 && sched.slopes[0].value == 0.5 && sched.slopes[7].value == 1.0 / 256;
        abl_schedule_free(&sched);
    }
    abl_schedule_spec_free(&spec);
    /* The layer is a value too (issue 17): the default layer is the paper's; at 16 heads and 2048 tokens
     * its analysis has 16 heads, 9 of them blind (the paper's Table 1). */
    abl_layer layer;
    abl_layer_init(&layer);
    layer.heads = 16;
    layer.context = 2048;
    abl_analysis_config acfg;
    abl_layer_analysis_config(&layer, &acfg);
    abl_analysis an;
    int layer_ok = abl_analysis_run(&acfg, &an) == ABL_OK && an.heads == 16 && an.blind_heads == 9;
    abl_analysis_free(&an);
    abl_layer_free(&layer);
    int ok = layer_ok && st == ABL_OK && k == -126 && strstr(buf, "87.3365447506") != NULL && sub < -92.1885750144 &&
             sub > -92.1885750145 && sched_ok;
    free(buf);
    return ok ? 0 : 1;
}

/* alibi-blind: the criteria `check --criterion` gates on (include/abl/model/compare.h). One row each;
 * the CLI reads the names from here. */
#include "abl/model/compare.h"

static const struct {
    const char *name;
    const char *help;
} k_criteria[ABL_CRITERION_COUNT] = {
    [ABL_CRITERION_WEIGHT] = {"weight", "a key is lost when its attention weight is exactly 0"},
    [ABL_CRITERION_INFLUENCE] = {"influence", "a key is lost when its term in P.V is 0 for unit-scale values "
                                              "(P rounded to pv-dtype, added in pv-accumulate)"},
};

const char *abl_check_criterion_name(abl_check_criterion c)
{
    return (unsigned)c < ABL_CRITERION_COUNT ? k_criteria[c].name : NULL;
}

const char *abl_check_criterion_help(abl_check_criterion c)
{
    return (unsigned)c < ABL_CRITERION_COUNT ? k_criteria[c].help : NULL;
}

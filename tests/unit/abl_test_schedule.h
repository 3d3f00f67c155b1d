/* Unit tests hand the library schedule values, as the boundary parsers do: the text is parsed once here
 * (abl_schedule_spec_parse, itself tested against independent values in test_slope.c) and the value kept
 * until abl_test_schedules_free, the group teardown. */
#ifndef ABL_TEST_SCHEDULE_H
#define ABL_TEST_SCHEDULE_H

#include <stdlib.h>
#include "abl/core/slope.h"

static abl_schedule_spec **abl_test_specs;
static size_t abl_test_nspecs;

/* The value of a schedule text (NULL: NULL, i.e. press); a text that does not parse fails the test. */
static inline const abl_schedule_spec *abl_test_schedule(const char *text)
{
    if (text == NULL)
        return NULL;
    abl_schedule_spec **grown = realloc(abl_test_specs, (abl_test_nspecs + 1) * sizeof *grown);
    abl_schedule_spec *s = malloc(sizeof *s);
    assert_non_null(grown);
    assert_non_null(s);
    abl_test_specs = grown;
    assert_int_equal(abl_schedule_spec_parse(text, s, NULL), ABL_OK);
    abl_test_specs[abl_test_nspecs++] = s;
    return s;
}

static inline int abl_test_schedules_free(void **state)
{
    (void)state;
    for (size_t i = 0; i < abl_test_nspecs; i++) {
        abl_schedule_spec_free(abl_test_specs[i]);
        free(abl_test_specs[i]);
    }
    free(abl_test_specs);
    abl_test_specs = NULL;
    abl_test_nspecs = 0;
    return 0;
}

#endif

/* Unit tests for abl_status_message: every code has its own non-empty message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "abl/core/status.h"

#define LAST_CODE ABL_ERR_SLOPE_CALC

static void test_every_code_has_a_distinct_message(void **state)
{
    (void)state;
    const char *unknown = abl_status_message((abl_status)(LAST_CODE + 1));
    for (int a = ABL_OK; a <= (int)LAST_CODE; a++) {
        const char *ma = abl_status_message((abl_status)a);
        assert_non_null(ma);
        assert_true(strlen(ma) > 0);
        assert_string_not_equal(ma, unknown);
        /* Short and single-line: the CLI prints it after "error: " on one stderr line. */
        assert_true(strlen(ma) < 80);
        assert_null(strchr(ma, '\n'));
        for (int b = a + 1; b <= (int)LAST_CODE; b++)
            assert_string_not_equal(ma, abl_status_message((abl_status)b));
    }
}

static void test_known_messages(void **state)
{
    (void)state;
    assert_string_equal(abl_status_message(ABL_ERR_UNKNOWN_DTYPE), "unknown floating-point format");
    assert_string_equal(abl_status_message(ABL_ERR_UNKNOWN_OUTPUT), "unknown output format");
    assert_string_equal(abl_status_message(ABL_ERR_NO_MEMORY), "out of memory");
}

static void test_unknown_code(void **state)
{
    (void)state;
    assert_string_equal(abl_status_message((abl_status)(LAST_CODE + 1)), "unknown status");
    assert_string_equal(abl_status_message((abl_status)1000), "unknown status");
    assert_string_equal(abl_status_message((abl_status)-1), "unknown status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_a_distinct_message),
        cmocka_unit_test(test_known_messages),
        cmocka_unit_test(test_unknown_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* libFuzzer harness: the whole command line, in process (abl_cli_main with memory streams).
 *
 * Input: the arguments after the program name, one per line (exactly a tests/cli/NAME.cmd file, so the
 * golden tests are the seed corpus); a NUL also ends an argument (argv cannot hold one). After each
 * input the harness checks the CLI's contract and aborts (a finding) when it is broken:
 *   exit 0 or 1  -> something on standard output (every command prints a report or help);
 *   exit 2       -> exactly one line on standard error and nothing on standard output;
 *   exit 3       -> only for "out of memory";
 *   any other exit status is a finding, and so is every sanitizer report, leak and timeout;
 *   and on standard output (docs/spec.md "Text on standard output"): no raw control byte but newline
 *   and tab, no C1 control (UTF-8 C2 80..C2 9F), and no line that begins (after blanks) with the
 *   GitHub Actions workflow-command prefix "::" (shell completion scripts excepted: zsh's own syntax).
 * Inputs that would write files (--output, --weights, --plot), lift the work budget (--force) or read
 * standard input (an argument "-") are skipped: the fuzzer must not write outside memory, and every input it runs has a bounded cost. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

static int skipped(const char *arg)
{
    static const char *const writers[] = {"--output", "--weights", "--plot", "--force"};
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
        if (strncmp(arg, writers[i], strlen(writers[i])) == 0)
            return 1;
    /* "-" (--config -) reads standard input: the fuzzer's own, which is not the input and may never end. */
    size_t n = strlen(arg);
    return strcmp(arg, "-") == 0 || (n >= 2 && strcmp(arg + n - 2, "=-") == 0);
}

static size_t count_char(const char *s, size_t n, char c)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == c;
    return k;
}

/* The first offending offset of standard output, or -1: a raw control byte (other than \n and \t), a
 * C1 control, or a line starting with "::". */
static long raw_output(const char *s, size_t n, int lines)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
            return (long)i;
        if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9F)
            return (long)i;
        if (lines && (i == 0 || s[i - 1] == '\n')) {
            size_t k = i;
            while (k < n && (s[k] == ' ' || s[k] == '\t'))
                k++;
            if (k + 1 < n && s[k] == ':' && s[k + 1] == ':')
                return (long)k;
        }
    }
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = malloc(size + 1);
    char **argv = malloc((size + 2) * sizeof *argv);
    if (text == NULL || argv == NULL) {
        free(text);
        free(argv);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = 0;
    argv[argc++] = "alibi-blind";
    char *p = text, *end = text + size;
    int skip = 0;
    while (p < end) {
        char *q = p;
        while (q < end && *q != '\n' && *q != '\0')
            q++;
        *q = '\0';
        skip |= skipped(p);
        argv[argc++] = p;
        p = q + 1;
    }
    argv[argc] = NULL;
    if (skip) {
        free(text);
        free(argv);
        return 0;
    }
    /* A small work budget: expensive inputs are refused (exit 2, checked like any other answer). The CLI
     * reads its budget per command (abl_cli_budget_from_env), so it is set through the environment. */
    setenv("ABL_BUDGET_SECONDS", "0.05", 1);
    char *out = NULL, *err = NULL;
    size_t outlen = 0, errlen = 0;
    FILE *fo = open_memstream(&out, &outlen), *fe = open_memstream(&err, &errlen);
    if (fo == NULL || fe == NULL)
        abort();
    int rc = abl_cli_main(argc, argv, fo, fe);
    fclose(fo);
    fclose(fe);
    int bad = 0;
    if (rc == 0 || rc == 1)
        bad = outlen == 0 || raw_output(out, outlen, argc < 2 || strcmp(argv[1], "completion") != 0) >= 0;
    else if (rc == 2)
        bad = outlen != 0 || count_char(err, errlen, '\n') != 1 || errlen == 0 || err[errlen - 1] != '\n';
    else if (rc == 3)
        bad = strstr(err, "out of memory") == NULL;
    else
        bad = 1;
    if (bad) {
        fprintf(stderr, "contract broken: exit %d, %zu bytes on stdout, stderr:\n%s\nargs:", rc, outlen, err);
        for (int i = 1; i < argc; i++)
            fprintf(stderr, " [%s]", argv[i]);
        fputc('\n', stderr);
        abort();
    }
    free(out);
    free(err);
    free(text);
    free(argv);
    return 0;
}

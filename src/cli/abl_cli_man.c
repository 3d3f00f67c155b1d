/*
 * alibi-blind man TEMPLATE (hidden): the man page, written from its template (docs/alibi-blind.1.in) and the
 * option table. The template holds the prose; in each command's subsection a line `.\" @options CMD` starts
 * the command's options and `.\" @option NAME` the hand-written text of one of them, up to the next
 * marker, .SS or .SH. What comes from the table is written here: which options the command has, their
 * order, the item heads (.TP, .B \-\-flag / .BI \-\-opt " METAVAR"), and the help text of an option the
 * template says nothing about. A template item for an option the command does not take is an error, so
 * the page cannot document an option that does not exist. The build writes the installed page this way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abl_cli.h"

typedef struct man_item {
    abl_opt id;
    char *text; /* the template's lines for it, or NULL */
} man_item;

/* roff for a name or metavar: '-' is \-. */
static void put_dashes(FILE *f, const char *s)
{
    for (; *s != '\0'; s++)
        fputs(*s == '-' ? "\\-" : (char[]){*s, '\0'}, f);
}

/* The table's help text as roff: ASCII only (the Greek and section letters it uses as escapes). */
static void put_help(FILE *f, const char *s)
{
    static const struct {
        const char *utf8, *roff;
    } esc[] = {{"§", "\\(sc"}, {"δ", "\\(*d"}, {"τ", "\\(*t"}, {"≤", "\\(<="}, {"×", "\\(mu"}};
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    while (*s != '\0') {
        size_t k;
        for (k = 0; k < sizeof esc / sizeof esc[0]; k++)
            if (strncmp(s, esc[k].utf8, strlen(esc[k].utf8)) == 0)
                break;
        if (k < sizeof esc / sizeof esc[0]) {
            fputs(esc[k].roff, f);
            s += strlen(esc[k].utf8);
        } else if (*s == '\\') {
            fputs("\\e", f);
            s++;
        } else if (*s == '-') {
            fputs("\\-", f);
            s++;
        } else {
            fputc(*s++, f);
        }
    }
    fputc('\n', f);
}

static const abl_cli_cmd *command_named(const char *name)
{
    for (size_t i = 0; i < abl_cli_ncommands; i++)
        if (strcmp(abl_cli_commands[i]->name, name) == 0)
            return abl_cli_commands[i];
    return NULL;
}

/* The options of `cmd` in its (sorted) order, each with the template's text when it has one. */
static void put_options(FILE *out, const abl_cli_cmd *cmd, const man_item *items)
{
    for (size_t k = 0; k < cmd->nopts; k++) {
        abl_cli_opt o = abl_cli_use_opt(&cmd->opts[k]);
        fputs(".TP\n", out);
        fputs(o.metavar != NULL ? ".BI \\-\\-" : ".B \\-\\-", out);
        put_dashes(out, o.name);
        if (o.metavar != NULL) {
            fputs(" \" ", out);
            put_dashes(out, o.metavar);
            fputc('"', out);
        }
        fputc('\n', out);
        if (items[cmd->opts[k].id].text != NULL)
            fputs(items[cmd->opts[k].id].text, out);
        else
            put_help(out, o.help);
    }
}

static int takes(const abl_cli_cmd *cmd, abl_opt id)
{
    for (size_t k = 0; k < cmd->nopts; k++)
        if (cmd->opts[k].id == id)
            return 1;
    return 0;
}

/* Read a command's option items (from after its @options line to the next .SS/.SH); the line that
 * ended them is left in *line. Returns 0 or the exit status after the one-line error. */
static int read_items(FILE *in, const char *path, size_t *lineno, const abl_cli_cmd *cmd, man_item *items,
                      char **line, size_t *cap)
{
    man_item *cur = NULL;
    size_t curlen = 0;
    while (getline(line, cap, in) >= 0) {
        (*lineno)++;
        const char *l = *line;
        if (strncmp(l, ".SS", 3) == 0 || strncmp(l, ".SH", 3) == 0)
            return 0;
        if (strncmp(l, ".\\\" @option ", 12) == 0) {
            const char *name = l + 12;
            size_t len = strcspn(name, " \n");
            abl_opt id = abl_cli_opt_id(name, len);
            if (id == ABL_OPT_COUNT || !takes(cmd, id))
                return abl_cli_usage_error("%s:%zu: %s takes no option --%.*s", path, *lineno, cmd->name, (int)len,
                                           name);
            if (items[id].text != NULL)
                return abl_cli_usage_error("%s:%zu: --%.*s twice", path, *lineno, (int)len, name);
            cur = &items[id];
            curlen = 0;
            if ((cur->text = strdup("")) == NULL)
                return abl_cli_internal_error("out of memory");
            continue;
        }
        if (cur == NULL)
            return abl_cli_usage_error("%s:%zu: text before the first @option of %s", path, *lineno, cmd->name);
        size_t n = strlen(l);
        char *t = realloc(cur->text, curlen + n + 1);
        if (t == NULL)
            return abl_cli_internal_error("out of memory");
        memcpy(t + curlen, l, n + 1);
        cur->text = t;
        curlen += n;
    }
    free(*line);
    *line = NULL;
    return 0;
}

static int write_page(FILE *in, const char *path, FILE *out)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    int rc = 0;
    int have = getline(&line, &cap, in) >= 0;
    while (rc == 0 && have) {
        lineno++;
        if (strncmp(line, ".\\\" @options ", 13) != 0) {
            fputs(line, out);
            have = getline(&line, &cap, in) >= 0;
            continue;
        }
        const char *name = line + 13;
        name = strndup(name, strcspn(name, " \n"));
        const abl_cli_cmd *cmd = name != NULL ? command_named(name) : NULL;
        if (cmd == NULL) {
            rc = name == NULL ? abl_cli_internal_error("out of memory")
                              : abl_cli_usage_error("%s:%zu: no command '%s'", path, lineno, name);
            free((char *)name);
            break;
        }
        free((char *)name);
        man_item *items = calloc(ABL_OPT_COUNT, sizeof *items);
        if (items == NULL) {
            rc = abl_cli_internal_error("out of memory");
            break;
        }
        size_t at = lineno;
        rc = read_items(in, path, &at, cmd, items, &line, &cap);
        if (rc == 0)
            put_options(out, cmd, items);
        for (size_t i = 0; i < ABL_OPT_COUNT; i++)
            free(items[i].text);
        free(items);
        /* The line that ended the items (.SS/.SH) is the next one to copy. */
        lineno = at - 1;
        have = line != NULL;
    }
    free(line);
    return rc;
}

int abl_cli_man(const abl_cli_ctx *ctx, int argc, char **argv)
{
    if (argc != 1)
        return abl_cli_usage_error("man: which template? (alibi-blind man docs/alibi-blind.1.in)");
    FILE *in = fopen(argv[0], "r");
    if (in == NULL)
        return abl_cli_usage_error("man: cannot open '%s'", argv[0]);
    int rc = write_page(in, argv[0], ctx->out);
    fclose(in);
    if (rc == 0 && (fflush(ctx->out) != 0 || ferror(ctx->out)))
        rc = abl_cli_internal_error("cannot write to standard output");
    return rc;
}

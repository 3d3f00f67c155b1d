/* alibi-blind: the report writer's neutraliser and JSON strings for the stages above it (not part of the public API). */
#ifndef ABL_REPORT_INTERNAL_H
#define ABL_REPORT_INTERNAL_H

#include "abl_internal.h"

/* s with the output neutraliser's visible escapes for text formats (abl_report.c, docs/spec.md "Text on
 * standard output"): every control character, DEL, C1 control and invalid UTF-8 byte escaped. NULL on
 * allocation failure. The HTML writer escapes its markup after this. */
char *abl_neutral_text(const char *s);

/* Append s to t as abl_report_json_string writes it: the one JSON string escaper. */
void abl_text_json(abl_text *t, const char *s);

/* Append an exact integer's two JSON members, as the report writes an integer field (abl_report_column_integer):
 * "key": the number (null above 2^53 or when token is null), "key_exact": its decimal string (or null). token:
 * abl_delta_json's token. For JSON that a builder writes by hand inside one member. */
void abl_text_json_integer(abl_text *t, const char *key, const char *token);

/* ".0" when token is a JSON number written as an integer literal, else "": appended to a real-valued number
 * that a builder writes by hand inside one member, so that its JSON type never depends on its value (the
 * report writer does the same for its real keys, abl_report.c real_keys). */
const char *abl_json_real_suffix(const char *token);

#endif

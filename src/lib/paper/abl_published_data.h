/* alibi-blind: the compiled-in transcription of the paper's values. The array is generated at
 * configure time from the CSV files of tables/published by cmake/abl_embed_published.cmake. */
#ifndef ABL_PUBLISHED_DATA_H
#define ABL_PUBLISHED_DATA_H

#include <stddef.h>

typedef struct abl_embedded_file {
    const char *name;              /* "table1.csv" */
    const unsigned char *bytes;    /* the file's bytes, followed by a NUL */
    size_t len;                    /* without the NUL */
} abl_embedded_file;

extern const abl_embedded_file abl_embedded_published[];
extern const size_t abl_embedded_published_count;

#endif

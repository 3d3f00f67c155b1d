/* alibi-blind: captured attention scores as a NumPy .npy file (simulate --logits). The file is read
 * through a read-only memory mapping; rows are converted on demand (O(N) memory per thread).
 *
 * Accepted: format version 1.0, 2.0 or 3.0; descr '<f4' (float32) or '<f2' (float16) (native '=' or
 * '|' byte-order marks are refused: they are not what np.save writes on a little-endian host);
 * fortran_order False; shape (N, N) (one score matrix for every head) or (H, N, N). Write one with
 *     np.save("scores.npy", scores.astype(np.float32))     # scores: [H, N, N] or [N, N], C order
 * e.g. from PyTorch: np.save("scores.npy", (q @ k.transpose(-1, -2) * scale)[0].float().cpu().numpy()). */
#ifndef ABL_NPY_H
#define ABL_NPY_H

#include "abl/core/export.h"

#include <stddef.h>
#include <stdint.h>
#include "abl/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abl_npy {
    const unsigned char *map;  /* the whole file, mapped read-only */
    size_t map_len;
    const unsigned char *data; /* first element */
    int itemsize;              /* 4 (float32) or 2 (float16) */
    int ndim;                  /* 2 or 3 */
    uint64_t heads;            /* H (1 for a 2-D file: the same scores for every head) */
    uint64_t n;                /* N */
} abl_npy;

/*
 * Map and check a .npy file: header, dtype, shape, size (the data must be complete), and every score
 * of the causal part (key j <= query i) finite. On failure *msg gets one line naming the problem and
 * the status is ABL_ERR_IO (cannot open/read), ABL_ERR_PARSE (not a .npy file, unsupported dtype or
 * order, wrong shape, truncated, NaN or infinite score).
 */
ABL_API abl_status abl_npy_open(const char *path, abl_npy *out, char **msg);
ABL_API void abl_npy_close(abl_npy *f);

/*
 * abl_npy_open in two steps, so that a caller can judge the cost before a byte of data is read:
 * abl_npy_map maps the file and checks its header, dtype, shape and size against the file's length
 * (a header that claims more data than the file holds is refused here: ABL_ERR_PARSE); reading no
 * data, it costs the same for any shape. abl_npy_check_scores then reads the causal part (H N (N + 1) / 2
 * scores) and refuses a NaN or infinite one (ABL_ERR_PARSE, the file left mapped: close it).
 */
ABL_API abl_status abl_npy_map(const char *path, abl_npy *out, char **msg);
ABL_API abl_status abl_npy_check_scores(const abl_npy *f, char **msg);

/* Parse a header held in memory (the fuzz harness's entry point; same checks as abl_npy_open except
 * the finiteness scan, which needs the data). len is the number of bytes available. */
ABL_API abl_status abl_npy_parse(const unsigned char *buf, size_t len, abl_npy *out, char **msg);

/* Scores of head h (0-based; ignored for a 2-D file), query i, keys 0..count-1, as binary32 values. */
ABL_API void abl_npy_row(const abl_npy *f, uint64_t h, uint64_t i, uint64_t count, float *out);

/* binary16 bits to binary32 (exact) */
ABL_API float abl_half_to_float(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif

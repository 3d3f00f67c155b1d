/* alibi-blind (private): the Gaussian scores of `simulate` (fp32(S·z), z from abl_sim_gauss_pair),
 * computed with inlined binary64 log, sin and cos and a certified decision of the binary32 rounding;
 * a draw the certificate cannot decide is recomputed by abl_sim_gauss_pair itself (host libm), so
 * every score equals the reference's. tests/unit/test_fastgauss.c checks it on 2^22 draws. */
#ifndef ABL_FASTGAUSS_H
#define ABL_FASTGAUSS_H

#include <stdint.h>

/* The reference generator (abl_simulate.c): keys 2k and 2k + 1 of row i of head `head` (1-based). */
void abl_sim_gauss_pair(uint64_t seed, uint64_t head, uint64_t i, uint64_t k, double *z0, double *z1);

/* score[j] = (float)(std * z_j) for keys j = from..count-1 (from even) of row i, exactly as the
 * reference forms them. *slow (optional) is incremented for each pair recomputed by the reference. */
void abl_fastgauss_scores(uint64_t seed, uint64_t head, uint64_t i, double std, uint64_t from, uint64_t count,
                          float *score, uint64_t *slow);

/* An upper bound on |z| for every draw: r = sqrt(-2 ln u1) <= sqrt(106 ln 2) = 8.57190... (u1 >= 2^-53),
 * |cos|, |sin| <= 1, with room for the host's last-bit errors. */
#define ABL_GAUSS_Z_BOUND 8.6

#endif

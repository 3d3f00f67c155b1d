/* alibi-blind: torch SDPA's fused kernels, one row at a time (softmax sdpa-efficient, sdpa-cudnn).
 *
 * Memory-efficient kernel (pytorch/pytorch aten/src/ATen/native/transformers/cuda/mem_eff_attention/
 * kernel_forward.h, AttentionKernel::attention_kernel and iterative_softmax; docs/pipelines.md cites the
 * revision): the fp32 logit x (scores * scale + bias, the bias read from the float mask) is multiplied
 * by kLog2e; the keys are visited in blocks of kKeysPerBlock from key 0 upwards; the running max mi
 * takes each block's max; when it grows, the fp32 output accumulator and the row sum are multiplied by
 * exp2f(mi_old - mi_new); each block's exp2f(y - mi) is stored into shared memory in the model dtype
 * (P, the operand of P.V) and summed unrounded into s; the epilogue multiplies the accumulator by
 * fp32(1 / s) and converts to the output dtype. The weight of key j is the coefficient with which v_j
 * reaches the output: out(fp32(fp32(P_j * r_1 * ... * r_k) * fp32(1 / s))).
 *
 * cuDNN (closed source): the same online softmax with key tiles of 128 (block=128), and the normalised
 * fp32 output flushed to zero below 2^-126 before
 * the conversion (the model that explains the H200 measurements; docs/pipelines.md). */
#include <math.h>
#include <string.h>
#include "kernel/abl_round.h"

uint64_t abl_sdpa_row(const abl_emul *e, const float *x, uint64_t count, float *acc, float *wout, double *tvw)
{
    uint64_t B = e->block > 0 ? (uint64_t)e->block : count;
    int cudnn = e->softmax == ABL_SOFTMAX_SDPA_CUDNN;
    const float L = ABL_SDPA_LOG2E;
    float mi = -INFINITY, s = 0.0f;
    for (uint64_t lo = 0; lo < count; lo += B) {
        uint64_t hi = lo + B < count ? lo + B : count;
        float bm = -INFINITY;
        for (uint64_t j = lo; j < hi; j++) {
            acc[j] = (float)((double)x[j] * (double)L);     /* y, kept here until P replaces it */
            if (acc[j] > bm)
                bm = acc[j];
        }
        if (bm > mi) {
            if (mi != -INFINITY) {
                float r = abl_exp2_rn32((float)((double)mi - (double)bm));
                for (uint64_t j = 0; j < lo; j++)
                    if (acc[j] != 0.0f)
                        acc[j] = (float)((double)acc[j] * (double)r);
                s = (float)((double)s * (double)r);
            }
            mi = bm;
        }
        abl_xacc sum;
        abl_xacc_clear(&sum);
        for (uint64_t j = lo; j < hi; j++) {
            float ex = acc[j] == -INFINITY ? 0.0f : abl_exp2_rn32((float)((double)acc[j] - (double)mi));
            abl_xacc_add(&sum, ex);
            acc[j] = abl_fp_round32(&e->out, ex);
        }
        s = (float)((double)s + (double)abl_xacc_round32(&sum));
    }
    float alpha = (float)(1.0 / (double)s);
    uint64_t zeros = 0;
    for (uint64_t j = 0; j < count; j++) {
        float w = (float)((double)acc[j] * (double)alpha);
        if (cudnn && w < 0x1p-126f)
            w = 0.0f;
        zeros += abl_emul_put_weight(abl_fp_round32(&e->out, w), j, wout, tvw);
    }
    return zeros;
}

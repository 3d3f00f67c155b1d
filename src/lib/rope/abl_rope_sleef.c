/* alibi-blind: PyTorch CPU's fp32 pow, cos and sin, bit for bit, through the SLEEF library PyTorch calls.
 *
 * ATen (aten/src/ATen/cpu/vec/vec256/vec256_float.h, Vectorized<float>::cos/sin/pow) calls Sleef_cosf8_u10,
 * Sleef_sinf8_u10 and Sleef_powf8_u10 under the AVX2 CPU capability; the AVX2 variants use FMA. Two facts make a
 * scalar model insufficient (docs/rope.md, "PyTorch CPU's cos, sin and pow"):
 *  - cos/sin: SLEEF's u10 single-precision trigonometry picks its argument reduction per vector (all lanes below
 *    125, all below 39000, or Payne-Hanek), so a lane's last bit depends on the 7 other lanes of its group of 8.
 *    vec::map (aten/src/ATen/cpu/vml.h) groups a contiguous row from its start; the last partial group is padded
 *    with zeros (Vectorized::loadu(ptr, count)), which never change the choice.
 *  - pow (base ** exponents, a wrapped-scalar base): cpu_kernel_vec's vectorized_loop does 2 vectors (16 floats)
 *    per step; the last n % 16 elements go through the scalar op std::pow(float, float), glibc's powf.
 * SLEEF's powf is lane-independent, so its scalar FMA variant (Sleef_powf1_u10purecfma) gives the AVX2 variant's
 * bits. The trigonometry needs the AVX2 variant itself. Both need AVX2 and FMA: checked at run time. */
#include <math.h>
#include <string.h>
#include "rope/abl_rope_internal.h"

#if defined(ABL_HAVE_SLEEF) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ABL_SLEEF_AVX2 1
#define ABL_AVX2 __attribute__((target("avx2,fma")))
/* sleef.h declares the AVX2 entry points only when the including file is compiled with -mavx2; this file is
 * compiled for baseline x86-64 and calls them from functions built for AVX2, after the run-time check. */
ABL_AVX2 __m256 Sleef_cosf8_u10avx2(__m256 x);
ABL_AVX2 __m256 Sleef_sinf8_u10avx2(__m256 x);
float Sleef_powf1_u10purecfma(float x, float y);   /* built with -mfma by SLEEF: FMA instructions */
#endif

int abl_rope_sleef(void)
{
#ifdef ABL_SLEEF_AVX2
    /* PyTorch takes its AVX2 kernels on a CPU with AVX2 and FMA (and AVX512 ones where built, see docs/rope.md);
     * without them it runs its default kernels, whose cos/sin/pow are libm's: modelled as correctly rounded */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

float abl_rope_torch_pow(float x, float y, int vector_lane)
{
#ifdef ABL_SLEEF_AVX2
    if (vector_lane)
        return Sleef_powf1_u10purecfma(x, y);
#endif
    (void)vector_lane;
    return powf(x, y);   /* the scalar tail: std::pow(float, float) is libm's powf */
}

#ifdef ABL_SLEEF_AVX2
ABL_AVX2 static void group8(const float *in, int count, float *c, float *s)
{
    float lane[8] = {0}, oc[8], os[8];
    memcpy(lane, in, (size_t)count * sizeof *in);
    __m256 v = _mm256_loadu_ps(lane);
    _mm256_storeu_ps(oc, Sleef_cosf8_u10avx2(v));
    _mm256_storeu_ps(os, Sleef_sinf8_u10avx2(v));
    memcpy(c, oc, (size_t)count * sizeof *c);
    memcpy(s, os, (size_t)count * sizeof *s);
}
#endif

void abl_rope_torch_cos_sin(const float *row, int n, float *c, float *s)
{
#ifdef ABL_SLEEF_AVX2
    for (int j = 0; j < n; j += 8)
        group8(row + j, n - j < 8 ? n - j : 8, c + j, s + j);
#else
    (void)row, (void)n, (void)c, (void)s;
#endif
}

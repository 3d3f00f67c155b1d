/* alibi-blind (private): the documented semantics of the CUDA intrinsics the modelled GPU engines use
 * (docs/pipelines.md §3c). None of them is measured here: each is modelled from NVIDIA's documentation
 * (PTX ISA: ex2.approx.ftz.f32, rcp.approx.ftz.f32, div.approx.ftz.f32, the .ftz modifier; CUDA C++
 * Programming Guide, "Intrinsic Functions" and the -use_fast_math table: expf -> __expf, x/y ->
 * __fdividef(x, y); cuda_fp16.h: __float2half_rn, __hmul2, __hfma2 round to nearest even and keep fp16
 * subnormals). The approximate instructions are taken as correctly rounded before the flush (their
 * documented error, 2 ulp for ex2.approx and __expf near 0, 1 ulp for rcp.approx, is the model's
 * stated deviation), so a weight within two ulp of a zero boundary may differ on real hardware. */
#ifndef ABL_CUDA_MATH_H
#define ABL_CUDA_MATH_H

/* .ftz: a binary32 value below 2^-126 in magnitude (subnormal) becomes a zero of the same sign. */
float abl_cuda_ftz(float x);

/* ex2.approx.ftz.f32: 2^x, the subnormal input flushed first, a subnormal result flushed to +0;
 * -inf gives +0, +inf gives +inf. */
float abl_cuda_ex2_ftz(float x);

/* __expf(x) = ex2.approx.ftz.f32(x * 1.4426950f) (mul.ftz.f32: the product rounded to binary32 and
 * flushed): what expf compiles to under -use_fast_math. */
float abl_cuda_expf(float x);

/* rcp.approx.ftz.f32: 1/y rounded to binary32, flushed (so 0 for 2^126 < |y| < 2^128). */
float abl_cuda_rcp_ftz(float y);

/* __fdividef(x, y) (div.approx.ftz.f32, and x / y under -use_fast_math): x * rcp(y) rounded to
 * binary32 and flushed; 0 for 2^126 < |y| < 2^128 (CUDA's documented special case) and finite x. */
float abl_cuda_fdividef(float x, float y);

/* fp32 add and multiply under -ftz=true (fast math): the IEEE result, flushed. */
float abl_cuda_fadd(float a, float b);
float abl_cuda_fmul(float a, float b);
/* fma.rn.ftz.f32 (a contracted a * b + c): one rounding, flushed. */
float abl_cuda_fmaf(float a, float b, float c);

/* __float2half_rn / __float2bfloat16_rn: round to nearest even, subnormals kept (no .ftz for
 * conversions to half), +-inf past the largest finite; returned as the float it converts back to. */
float abl_cuda_f2h(float x);
float abl_cuda_f2bf(float x);

/* __hmul2 / __hfma2 lane by lane (mul.rn.f16, fma.rn.f16): the exact result rounded once to fp16,
 * subnormals kept; operands are fp16 values held in float. */
float abl_cuda_hmul(float a, float b);
float abl_cuda_hfma(float a, float b, float c);

#endif

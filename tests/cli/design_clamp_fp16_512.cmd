design
--clamp
--heads
16
--ctx
512
--dtype
fp16

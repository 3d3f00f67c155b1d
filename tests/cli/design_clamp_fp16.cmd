design
--clamp
--heads
16
--ctx
2048
--dtype
fp16

design
--clamp
--heads
4
--ctx
2048
--dtype
fp16

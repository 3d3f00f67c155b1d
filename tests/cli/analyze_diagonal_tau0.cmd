analyze
--heads
4
--ctx
64
--dtype
fp4-e2m1fn

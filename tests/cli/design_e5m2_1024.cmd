design
--heads
1
--ctx
1024
--dtype
fp8-e5m2

design
--heads
1
--ctx
1025
--dtype
fp16

design
--targets
100,300
--ctx
2048
--dtype
fp16

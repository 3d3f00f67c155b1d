design
--heads
4
--ctx
2048
--dtype
fp16,bf16
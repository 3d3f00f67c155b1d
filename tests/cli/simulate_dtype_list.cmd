simulate
--heads
2
--ctx
64
--dtype
bf16,fp16
figure
1a
--dtype
bf16,fp16
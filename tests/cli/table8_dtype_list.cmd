table
8
--dtype
bf16,fp16
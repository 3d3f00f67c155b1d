analyze
--model
bloom-560m,mpt-7b
--dtype
bf16,fp16
--ctx
1k

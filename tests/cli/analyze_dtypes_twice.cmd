analyze
--heads
4
--ctx
2048
--dtype
bf16,torch.bfloat16
verify
--dtype
bf16,

verify
--dtype
bf16

table
4
--dtype
bf16,,fp32

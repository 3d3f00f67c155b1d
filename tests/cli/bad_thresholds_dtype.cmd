thresholds
--dtype
bf16,fp7

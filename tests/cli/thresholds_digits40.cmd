thresholds
--dtype
bf16,fp16,float8_e4m3fn
--digits
40
--format
csv

thresholds
--dtype
bf16,fp16,e4m3
--digits
40
--format
csv

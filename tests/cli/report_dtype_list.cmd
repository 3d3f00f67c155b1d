report
--model
bloom-560m
--dtype
bf16,fp16
--output
report.html
verify
--dtype
bf16
--format
json

thresholds
--dtype
torch.bfloat16,torch.float8_e4m3fn,float8_e4m3,float8_e3m4,ml_dtypes.float6_e2m3fn
--format
JSON

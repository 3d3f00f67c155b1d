verify
--dtype
fp8-e4m3fn,fp6-e3m2fn,fp4-e2m1fn
--format
markdown

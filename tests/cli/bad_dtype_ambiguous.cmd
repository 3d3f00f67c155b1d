thresholds
--dtype
e4m3

thresholds
--dtype
all
--digits
4

thresholds
--digits
-1

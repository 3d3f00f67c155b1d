simulate
--predict
--heads
64
--ctx
16777216
--threads
1

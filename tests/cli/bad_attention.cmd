analyze
--heads
4
--ctx
10
--attention
sideways

analyze
--heads
16
--ctx
0

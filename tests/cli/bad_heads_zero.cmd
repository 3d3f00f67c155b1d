analyze
--heads
0
--ctx
2048

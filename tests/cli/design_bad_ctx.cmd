design
--heads
4
--ctx
0

simulate
--heads
4
--ctx
16777217

design
--heads
1
--ctx
16777216

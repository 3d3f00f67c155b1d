simulate
--heads
8
--ctx
300

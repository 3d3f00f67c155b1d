simulate
--heads
8
--ctx
300
--wide

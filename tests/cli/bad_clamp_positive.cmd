analyze
--heads
8
--ctx
100
--clamp
87

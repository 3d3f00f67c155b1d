analyze
--heads
2
--ctx
100
--clamp
-1e59
--wide

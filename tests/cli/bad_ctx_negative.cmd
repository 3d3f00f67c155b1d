analyze
--heads
16
--ctx
-5

analyze
--heads
4
--ctx
64
--upstream
1

analyze
--heads
1078
--mitigate
E
--ctx
64

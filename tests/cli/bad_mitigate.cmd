analyze
--heads
16
--ctx
2048
--mitigate
X

analyze
--heads
9
--ctx
2048
--mitigate
C,E,L,S

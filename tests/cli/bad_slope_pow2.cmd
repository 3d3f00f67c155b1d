analyze
--heads
4
--ctx
2048
--slopes
slopes:2^(1/0)

analyze
--heads
1e9
--ctx
2048

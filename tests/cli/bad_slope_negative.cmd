analyze
--heads
1
--ctx
2048
--slopes
slopes:-1

analyze
--heads
4
--ctx
2048
--slopes
slopes:0.5,0.25

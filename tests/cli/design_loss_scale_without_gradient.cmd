design
--heads
4
--ctx
1024
--loss-scale
2^8

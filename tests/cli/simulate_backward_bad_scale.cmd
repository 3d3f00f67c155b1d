simulate
--heads
4
--ctx
64
--loss-scale
3
--backward

figure
1a
--heads
4
--ctx
512
--step
128

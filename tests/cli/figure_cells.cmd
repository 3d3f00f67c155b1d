figure
1a
--heads
1000
--step
1

simulate
--heads
1
--ctx
8
--weights
/dev/full

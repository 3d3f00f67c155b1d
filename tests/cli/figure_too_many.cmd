figure
1b
--ctx
1e12
--step
1

figure
1b
--step
0

figure
1a
--heads
65536
--step
1
--format
csv

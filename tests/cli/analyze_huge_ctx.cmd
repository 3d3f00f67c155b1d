analyze
--heads
16
--ctx
1e12
--format
csv

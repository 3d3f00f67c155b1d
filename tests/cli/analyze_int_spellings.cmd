analyze
--heads
1e1
--ctx
2.048e3
--format
csv

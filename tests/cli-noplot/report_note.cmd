report
--heads
8
--ctx
512
--output
report.html

analyze
--heads
65536
--ctx
16777216
--pipeline
eager

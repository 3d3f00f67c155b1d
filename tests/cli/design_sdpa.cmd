design
--heads
4
--ctx
512
--pipeline
sdpa-efficient

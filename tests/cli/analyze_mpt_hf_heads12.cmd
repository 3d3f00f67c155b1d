analyze
--heads
12
--ctx
2048
--pipeline
mpt-hf

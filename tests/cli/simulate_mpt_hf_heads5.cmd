simulate
--pipeline
mpt-hf
--heads
5
--ctx
1024

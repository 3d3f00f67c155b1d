simulate
--predict
--pipeline
mpt-hf
--heads
3
--ctx
100

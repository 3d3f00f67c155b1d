simulate
--predict
--pipeline
mpt-hf
--heads
24
--ctx
2048

simulate
--predict
--heads
16
--ctx
32768
--pipeline
mpt

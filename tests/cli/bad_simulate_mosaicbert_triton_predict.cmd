simulate
--heads
4
--pipeline
mosaicbert-triton
--ctx
64
--predict

simulate
--heads
4
--ctx
64
--pipeline
refact-hf,bias-offset=2

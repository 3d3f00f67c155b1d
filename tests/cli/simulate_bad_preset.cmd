simulate
--heads
4
--ctx
64
--pipeline
nope

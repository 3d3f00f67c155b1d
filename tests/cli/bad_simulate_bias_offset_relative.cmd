simulate
--heads
4
--ctx
64
--pipeline
eager,bias-offset=1

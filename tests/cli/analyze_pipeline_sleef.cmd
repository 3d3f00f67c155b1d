analyze
--heads
4
--ctx
64
--pipeline
eager,exp=sleef

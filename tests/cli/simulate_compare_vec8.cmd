simulate
--heads
4
--ctx
64
--compare
--pipeline
eager,sum=vec8

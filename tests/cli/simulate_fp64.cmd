simulate
--heads
4
--ctx
64
--pipeline
eager,output-dtype=fp64

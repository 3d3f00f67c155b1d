analyze
--heads
8
--ctx
1024
--pipeline
eager,output-dtype=fp16

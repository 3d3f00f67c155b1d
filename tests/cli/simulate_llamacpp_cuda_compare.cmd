simulate
--heads
8
--ctx
2048
--pipeline
llamacpp-cuda
--compare

simulate
--heads
8
--ctx
4096
--pipeline
llamacpp-cuda-fa
--compare

check
--model
bloom-560m
--pipeline
llamacpp-cpu-fa
--ctx
2048

check
--model
bloom-560m
--ctx
4096
--pipeline
vllm-paged

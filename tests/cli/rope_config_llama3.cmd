rope
--config
@DATA@/../../data/configs/rope_tiny_llama3.json

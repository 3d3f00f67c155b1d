analyze
--config
@DATA@/../../data/configs/refact-1_6b-gguf.json
--ctx
1k

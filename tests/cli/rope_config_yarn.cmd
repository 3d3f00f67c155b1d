rope
--config
@DATA@/../../data/configs/rope_tiny_yarn.json

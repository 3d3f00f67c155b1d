rope
--config
@DATA@/../../data/configs/rope_yarn.json

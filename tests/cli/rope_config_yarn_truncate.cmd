rope
--config
@DATA@/../../data/configs/rope_yarn_truncate.json
--format
json

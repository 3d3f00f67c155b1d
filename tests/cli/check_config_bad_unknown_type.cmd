check
--config
@DATA@/../../data/configs/bad-unknown-type.json
--ctx
2048

check
--config
@DATA@/../../data/configs/bad-not-object.json
--ctx
2048

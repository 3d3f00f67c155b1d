check
--config
@DATA@/../../data/configs/bad-duplicate-key.json
--ctx
2048

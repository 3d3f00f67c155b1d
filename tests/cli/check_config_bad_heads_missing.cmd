check
--config
@DATA@/../../data/configs/bad-heads-missing.json
--ctx
2048

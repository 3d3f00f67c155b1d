check
--config
@DATA@/../../data/configs/bad-heads-string.json
--ctx
2048

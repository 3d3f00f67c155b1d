check
--config
@DATA@/../../data/configs/bad-truncated.json
--ctx
2048

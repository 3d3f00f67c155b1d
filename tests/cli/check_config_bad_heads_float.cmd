check
--config
@DATA@/../../data/configs/bad-heads-float.json
--ctx
2048

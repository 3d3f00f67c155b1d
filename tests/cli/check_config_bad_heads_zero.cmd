check
--config
@DATA@/../../data/configs/bad-heads-zero.json
--ctx
2048

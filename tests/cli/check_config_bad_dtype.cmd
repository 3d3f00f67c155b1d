check
--config
@DATA@/../../data/configs/bad-dtype.json
--ctx
2048

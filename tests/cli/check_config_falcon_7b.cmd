check
--config
@DATA@/../../data/configs/falcon-7b.json
--ctx
2048

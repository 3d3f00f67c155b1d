check
--config
@DATA@/../../data/configs/baichuan-7b-derivative.json
--ctx
2048

check
--config
@DATA@/../../data/configs/no-such-file.json
--ctx
2048

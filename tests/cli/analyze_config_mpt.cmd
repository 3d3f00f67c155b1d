analyze
--config
@DATA@/../../data/configs/mpt-7b-instruct.json

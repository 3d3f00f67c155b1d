design
--config
@DATA@/../../data/configs/mpt-7b-instruct.json
--ctx
512

design
--config
@DATA@/../../data/configs/bad-heads-zero.json
--ctx
512

rope
--config
@DATA@/../../data/configs/rope_bad_longrope.json

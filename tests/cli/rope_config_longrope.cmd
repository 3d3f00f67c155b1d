rope
--config
@DATA@/../../data/configs/rope_longrope.json

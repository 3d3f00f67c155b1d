analyze
--config
@DATA@/../../data/configs/falcon-rw-1b.json

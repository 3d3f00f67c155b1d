analyze
--config
@DATA@/../../data/configs/bloom-560m.json

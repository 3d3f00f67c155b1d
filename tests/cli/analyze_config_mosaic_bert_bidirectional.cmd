analyze
--config
@DATA@/../../data/configs/mosaic-bert-base.json
--format
json

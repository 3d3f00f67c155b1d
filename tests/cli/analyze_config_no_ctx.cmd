analyze
--config
@DATA@/../../data/configs/jina-bert-v2-qk-post-norm.json

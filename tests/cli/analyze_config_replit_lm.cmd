analyze
--config
@DATA@/../../data/configs/replit-code-v1-3b.json

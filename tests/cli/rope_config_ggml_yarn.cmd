rope
--config
@DATA@/../../data/configs/rope_ggml_yarn.json
--pipeline
ggml-cpu
--format
json

report
--model
bloom-560x
--config
@DATA@/../../data/configs/bad-unknown-type.json
--output
report-model-config.html

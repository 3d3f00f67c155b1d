report
--config
@DATA@/../../data/configs/bad-unknown-type.json
--output
report-bad-config.html

report
--config
@DATA@/../../data/configs/mpt-7b-instruct.json
--ctx
512
--output
report-config.html

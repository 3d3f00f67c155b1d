plot
blindmap
--config
@DATA@/../../data/configs/bad-truncated.json
--output
plot-bad-config.svg

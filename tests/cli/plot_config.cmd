plot
bias
--config
@DATA@/../../data/configs/bloom-560m.json
--output
plot-config-bias.svg

plot
bias
--model
bloom-560x
--output
plot-bad-model.png

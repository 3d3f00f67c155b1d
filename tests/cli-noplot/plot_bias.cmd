plot
bias
--heads
8
--output
bias.png

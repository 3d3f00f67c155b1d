plot
blindmap
--heads
256
--head
0
--output
x.svg

figure
1a
--plot
fig.svg

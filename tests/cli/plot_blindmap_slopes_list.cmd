plot
blindmap
--ctx
64
--slopes
slopes:0.5,1e-3
--output
map.svg

figure
1b
--format
json
--ctx
4096
--step
512
